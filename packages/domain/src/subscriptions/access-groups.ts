import type { Db } from '@svc/db';

export { unknownAccessGroups } from '../access-groups/group-refs.ts';

/** Replaces the subscription's access groups with `ids` (deduplicated). */
export async function setSubscriptionGroups(trx: Db, subscriptionId: string, ids: readonly string[]): Promise<void> {
  await trx.deleteFrom('subscription_access_groups').where('subscription_id', '=', subscriptionId).execute();
  const unique = [...new Set(ids)];
  if (unique.length === 0) return;
  await trx
    .insertInto('subscription_access_groups')
    .values(unique.map((access_group_id) => ({ subscription_id: subscriptionId, access_group_id })))
    .execute();
}

export const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
};
