import type { Db, PlanRow } from '@svc/db';
import { unknownAccessGroups } from '../access-groups/group-refs.ts';
import { ValidationError } from '../errors.ts';
import { liveLimitsOf } from '../limits/limit-fields.ts';

export interface PlanView {
  id: string;
  name: string;
  /** Minor units of `currency` (cents). */
  price: number;
  currency: string;
  duration_days: number;
  /** null: unlimited. */
  traffic_limit_bytes: number | null;
  /** Issue 36: copied onto a subscription bought or renewed with the plan, as its traffic limit is (null: none / uncapped). */
  device_limit: number | null;
  upload_bps: number | null;
  download_bps: number | null;
  /** What the plan includes, in the operator's words; null: none. */
  description: string | null;
  /** The traffic period of a subscription bought with the plan. */
  renewal: 'no_reset' | 'day' | 'week' | 'month';
  access_group_ids: string[];
  archived: boolean;
  created_at: string;
  updated_at: string;
}

export const planView = (r: PlanRow, accessGroupIds: string[]): PlanView => ({
  id: r.id,
  name: r.name,
  price: Number(r.price),
  currency: r.currency,
  duration_days: r.duration_days,
  traffic_limit_bytes: r.traffic_limit_bytes === null ? null : Number(r.traffic_limit_bytes),
  ...liveLimitsOf(r),
  description: r.description,
  renewal: r.renewal,
  access_group_ids: accessGroupIds,
  archived: r.archived,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

/** Access group ids of these plans, each list sorted by id. */
export async function planAccessGroups(db: Db, planIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(planIds.map((id) => [id, []]));
  if (planIds.length === 0) return out;
  const rows = await db
    .selectFrom('plan_access_groups')
    .select(['plan_id', 'access_group_id'])
    .where('plan_id', 'in', planIds)
    .orderBy('plan_id')
    .orderBy('access_group_id')
    .execute();
  for (const r of rows) out.get(r.plan_id)?.push(r.access_group_id);
  return out;
}

/**
 * The access groups a plan grants must exist. Locks them (FOR KEY SHARE, as the foreign key
 * would) so a concurrent delete of a group waits for this transaction and then sees the plan.
 * Duplicates are collapsed; the result is sorted.
 */
export async function checkAccessGroups(trx: Db, ids: readonly string[], field = 'access_group_ids'): Promise<string[]> {
  const errors = await unknownAccessGroups(trx, ids, field);
  if (Object.keys(errors).length > 0) throw new ValidationError('unknown access group', errors);
  return [...new Set(ids)].sort();
}

export async function replacePlanAccessGroups(trx: Db, planId: string, groupIds: readonly string[]): Promise<void> {
  await trx.deleteFrom('plan_access_groups').where('plan_id', '=', planId).execute();
  if (groupIds.length === 0) return;
  await trx
    .insertInto('plan_access_groups')
    .values(groupIds.map((g) => ({ plan_id: planId, access_group_id: g })))
    .execute();
}
