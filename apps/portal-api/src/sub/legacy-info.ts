import { type DomainDeps, getSubscriptionUsage, getSubscriptionUsageByNode, type SubscriptionDocumentData } from '@svc/domain';

/** The old panels whose `/info` a customer's app or page may still read. */
export type LegacyInfoKind = 'marzban' | 'marzneshin' | 'remnawave';

export interface LegacyInfoInput {
  /** What the source called the user. */
  username: string;
  data: SubscriptionDocumentData;
  /** The subscription's share links, as its link answers them. */
  links: string[];
  /** Our own link of the subscription (where the customer's app may move to). */
  subscriptionUrl: string;
}

const seconds = (at: Date | null) => (at === null ? null : Math.floor(at.getTime() / 1000));

/** Our status in the words of the old panel (Marzban: active/disabled/limited/expired/on_hold). */
function marzbanStatus(d: SubscriptionDocumentData): string {
  if (d.link_status === 'pending') return 'on_hold';
  return d.link_status;
}

/**
 * An old panel's `GET .../info`, answered from the subscription's state here in the fields of that
 * panel's own answer (shared/notes/import-sources.md: Marzban C, Marzneshin A.3, Remnawave B.5),
 * the ones a subscription page or app reads: name, state, traffic, limit, expiry, links, URL.
 * What has no value here (the source's admin, its per-node usage) is left out, never made up.
 */
export function legacyInfo(kind: LegacyInfoKind, i: LegacyInfoInput): Record<string, unknown> {
  const d = i.data;
  const used = d.upload_bytes + d.download_bytes;
  const active = d.link_status === 'active';
  if (kind === 'marzban')
    return {
      username: i.username,
      status: marzbanStatus(d),
      used_traffic: used,
      data_limit: d.traffic_limit_bytes,
      expire: seconds(d.expires_at),
      links: i.links,
      subscription_url: i.subscriptionUrl,
    };
  if (kind === 'marzneshin')
    return {
      username: i.username,
      expire_strategy: d.expires_at === null ? 'never' : 'fixed_date',
      expire_date: d.expires_at?.toISOString() ?? null,
      data_limit: d.traffic_limit_bytes,
      used_traffic: used,
      is_active: active,
      expired: d.link_status === 'expired',
      data_limit_reached: d.link_status === 'limited',
      enabled: d.link_status !== 'disabled',
      links: i.links,
      subscription_url: i.subscriptionUrl,
    };
  const daysLeft = d.expires_at === null ? 0 : Math.max(0, Math.ceil((d.expires_at.getTime() - Date.now()) / 86_400_000));
  return {
    response: {
      isFound: true,
      user: {
        username: i.username,
        daysLeft,
        trafficUsedBytes: String(used),
        trafficLimitBytes: String(d.traffic_limit_bytes ?? 0),
        expiresAt: d.expires_at?.toISOString() ?? null,
        isActive: active,
        userStatus: d.link_status === 'pending' ? 'ACTIVE' : d.link_status.toUpperCase(),
      },
      links: i.links,
      subscriptionUrl: i.subscriptionUrl,
    },
  };
}

const DAY_MS = 86_400_000;
/** ISO 8601 dates and times as the old panels take them (Python's fromisoformat): bounded before parsing. */
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function isoTime(raw: string): Date | null {
  if (raw.length > 40 || !ISO.test(raw)) return null;
  // No zone: UTC, as the panels' naive times are.
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/.test(raw) || raw.length === 10 ? raw : `${raw}Z`;
  const at = new Date(zoned.replace(' ', 'T'));
  return Number.isNaN(at.getTime()) ? null : at;
}

/** `?start=&end=` of an old panel's /usage: ISO times, by default the last 30 days. */
export function legacyUsageRange(
  start: string | undefined,
  end: string | undefined,
  now: Date,
): { from: Date; to: Date } | { error: string } {
  const to = end ? isoTime(end) : now;
  const from = start ? isoTime(start) : new Date((to ?? now).getTime() - 30 * DAY_MS);
  if (!to) return { error: 'end is not an ISO 8601 date or time' };
  if (!from) return { error: 'start is not an ISO 8601 date or time' };
  if (from.getTime() > to.getTime()) return { error: 'start is after end' };
  if (to.getTime() - from.getTime() > 366 * DAY_MS) return { error: 'at most 366 days' };
  return { from, to };
}

/**
 * An old panel's `GET .../usage`: Marzban's `{usages: [{node_id, node_name, used_traffic}],
 * username}` (per node), Marzneshin's `{step, total, usages: [[unix time, bytes]]}` (per hour, or
 * per day beyond three days), from the traffic counted here since the import (the source's
 * history stays with it).
 */
export async function legacyUsage(
  kind: 'marzban' | 'marzneshin',
  deps: Pick<DomainDeps, 'db' | 'clock'>,
  q: { username: string; subscriptionId: string; from: Date; to: Date },
): Promise<Record<string, unknown>> {
  if (kind === 'marzban') {
    const nodes = await getSubscriptionUsageByNode(deps, q.subscriptionId, q.from, q.to);
    return {
      usages: nodes.map((n) => ({ node_id: n.node_id, node_name: n.node_name, used_traffic: n.uplink_bytes + n.downlink_bytes })),
      username: q.username,
    };
  }
  const granularity = q.to.getTime() - q.from.getTime() > 3 * DAY_MS ? 'day' : 'hour';
  const view = await getSubscriptionUsage(deps, q.subscriptionId, {
    from: q.from,
    to: new Date(Math.max(q.to.getTime(), q.from.getTime() + 1)),
    granularity,
  });
  const usages = view.items.map((i) => [Math.floor(Date.parse(i.start) / 1000), i.uplink_bytes + i.downlink_bytes] as const);
  return { step: granularity === 'day' ? 86_400 : 3_600, total: usages.reduce((sum, [, b]) => sum + b, 0), usages };
}
