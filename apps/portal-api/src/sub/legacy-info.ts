import type { SubscriptionDocumentData } from '@svc/domain';

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
