import type { Db, Renewal, SubscriptionRow, SubscriptionStatus } from '@svc/db';
import { liveLimitsOf } from '../limits/limit-fields.ts';
import type { Actor, DomainDeps } from '../shared/context.ts';
import { publicBaseUrl } from '../shared/public-url.ts';
import type { SubscriptionWithCounters } from './subscription-rows.ts';
import { currentStatus } from './subscription-status.ts';

export interface SubscriptionView {
  id: string;
  client_id: string;
  /** Computed as of the read (see subscriptionStatus). */
  status: SubscriptionStatus;
  access_group_ids: string[];
  traffic_limit_bytes: number | null;
  /** Issue 36: distinct client addresses at once (null: no limit), enforced by the nodes' agents. */
  device_limit: number | null;
  /** Issue 36: speed caps in bits per second (null: uncapped). */
  upload_bps: number | null;
  download_bps: number | null;
  used_bytes: number;
  expires_at: string | null;
  /** A term waiting for its first use (start-on-first-use.ts); expires_at is null meanwhile. */
  starts_on_first_use: { term_seconds: number; start_by: string | null } | null;
  renewal: Renewal;
  period_started_at: string;
  link: string;
  credentials_rotated_at: string | null;
  note: string | null;
  created_at: string;
  updated_at: string;
}

type ViewDeps = Pick<DomainDeps, 'secrets' | 'config'>;

/**
 * A subscription link is full proxy access (it lists every credential), so reading one is a
 * write-level right: owners and admins (who could rotate it anyway), the shell, and, on the
 * portal, the client whose subscription it is. A viewer sees that the link exists and what
 * state it serves (the subscription's status, when it was last rotated), never the token.
 */
export const mayReadLinks = (actor: Actor): boolean =>
  actor.type === 'system' || actor.type === 'client' || (actor.type === 'admin' && (actor.role === 'owner' || actor.role === 'admin'));

/** `{public_base_url}/sub/{token}`: unversioned (spec 9), valid until the credentials are rotated. */
export const subscriptionLink = (deps: Pick<DomainDeps, 'config'>, token: string): string => `${publicBaseUrl(deps.config)}/sub/${token}`;

/** The link of a stored row: its token is kept sealed so the link can be shown again. */
export const linkOf = (deps: ViewDeps, row: Pick<SubscriptionRow, 'token_enc'>): string =>
  subscriptionLink(deps, deps.secrets.open(row.token_enc));

/** What reads answer: the link is null for callers who may not read links (mayReadLinks). */
export type SubscriptionReadView = Omit<SubscriptionView, 'link'> & { link: string | null };

/**
 * No proxy credential and no token hash leave through the view; the link is the way in. Writes
 * answer with it (only owners and admins write); reads go through subscriptionReadView.
 */
export const subscriptionView = (deps: ViewDeps, row: SubscriptionWithCounters, groupIds: string[], now: Date): SubscriptionView =>
  viewWithLink(row, groupIds, now, linkOf(deps, row));

/** The view a read answers to this actor: a viewer gets link null (the token is never unsealed). */
export const subscriptionReadView = (
  deps: ViewDeps & { actor: Actor },
  row: SubscriptionWithCounters,
  groupIds: string[],
  now: Date,
): SubscriptionReadView => viewWithLink(row, groupIds, now, mayReadLinks(deps.actor) ? linkOf(deps, row) : null);

const viewWithLink = <L extends string | null>(row: SubscriptionWithCounters, groupIds: string[], now: Date, link: L) => ({
  id: row.id,
  client_id: row.client_id,
  status: currentStatus(row, now),
  access_group_ids: groupIds,
  traffic_limit_bytes: row.traffic_limit_bytes,
  ...liveLimitsOf(row),
  used_bytes: row.used_bytes,
  expires_at: row.expires_at?.toISOString() ?? null,
  starts_on_first_use:
    row.starts_on_first_use_seconds === null
      ? null
      : { term_seconds: Number(row.starts_on_first_use_seconds), start_by: row.start_by?.toISOString() ?? null },
  renewal: row.renewal,
  period_started_at: row.period_started_at.toISOString(),
  link,
  credentials_rotated_at: row.credentials_rotated_at?.toISOString() ?? null,
  note: row.note,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/** Access group ids of each subscription, ascending. */
export async function groupIdsOf(db: Db, subscriptionIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(subscriptionIds.map((id) => [id, []]));
  if (subscriptionIds.length === 0) return out;
  const rows = await db
    .selectFrom('subscription_access_groups')
    .select(['subscription_id', 'access_group_id'])
    .where('subscription_id', 'in', subscriptionIds)
    .orderBy('subscription_id')
    .orderBy('access_group_id')
    .execute();
  for (const r of rows) out.get(r.subscription_id)?.push(r.access_group_id);
  return out;
}
