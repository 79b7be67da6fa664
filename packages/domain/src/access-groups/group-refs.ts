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
