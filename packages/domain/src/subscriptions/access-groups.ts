import type { Db } from '@svc/db';

/**
 * Per-field reasons for ids in `ids` that name no access group (keys `<field>.<index>`,
 * like zod's paths). The groups found are locked FOR KEY SHARE: a concurrent delete of one
 * of them waits for this transaction instead of failing its foreign key afterwards.
 */
export async function unknownAccessGroups(trx: Db, ids: readonly string[], field = 'access_group_ids'): Promise<Record<string, string>> {
  const errors: Record<string, string> = {};
  if (ids.length === 0) return errors;
  const found = await trx
    .selectFrom('access_groups')
    .select('id')
    .where('id', 'in', [...new Set(ids)])
    .forKeyShare()
    .execute();
  const known = new Set(found.map((r) => r.id));
  ids.forEach((id, i) => {
    if (!known.has(id)) errors[`${field}.${i}`] = `no access group ${id}`;
  });
  return errors;
}

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
