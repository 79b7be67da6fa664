import type { Db, Renewal, SubscriptionRow, SubscriptionStatus } from '@svc/db';
import type { DomainDeps } from '../shared/context.ts';
import { publicBaseUrl } from '../shared/public-url.ts';
import { currentStatus } from './subscription-status.ts';

export interface SubscriptionView {
  id: string;
  client_id: string;
  /** Computed as of the read (see subscriptionStatus). */
  status: SubscriptionStatus;
  access_group_ids: string[];
  traffic_limit_bytes: number | null;
  used_bytes: number;
  expires_at: string | null;
  renewal: Renewal;
  period_started_at: string;
  link: string;
  credentials_rotated_at: string | null;
  note: string | null;
  created_at: string;
  updated_at: string;
}

type ViewDeps = Pick<DomainDeps, 'secrets' | 'config'>;

/** `{public_base_url}/sub/{token}`: unversioned (spec 9), valid until the credentials are rotated. */
export const subscriptionLink = (deps: Pick<DomainDeps, 'config'>, token: string): string => `${publicBaseUrl(deps.config)}/sub/${token}`;

/** The link of a stored row: its token is kept sealed so the link can be shown again. */
export const linkOf = (deps: ViewDeps, row: Pick<SubscriptionRow, 'token_enc'>): string =>
  subscriptionLink(deps, deps.secrets.open(row.token_enc));

/** No proxy credential and no token hash leave through the view; the link is the way in. */
export const subscriptionView = (deps: ViewDeps, row: SubscriptionRow, groupIds: string[], now: Date): SubscriptionView => ({
  id: row.id,
  client_id: row.client_id,
  status: currentStatus(row, now),
  access_group_ids: groupIds,
  traffic_limit_bytes: row.traffic_limit_bytes,
  used_bytes: row.used_bytes,
  expires_at: row.expires_at?.toISOString() ?? null,
  renewal: row.renewal,
  period_started_at: row.period_started_at.toISOString(),
  link: linkOf(deps, row),
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
