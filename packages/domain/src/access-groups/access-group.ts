import type { Db } from '@svc/db';
import { ConflictError, ValidationError } from '../errors.ts';

export interface AccessGroupView {
  id: string;
  name: string;
  /** Sorted by id. */
  inbound_ids: string[];
  created_at: string;
  updated_at: string;
}

interface GroupRow {
  id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

export const accessGroupView = (r: GroupRow, inboundIds: string[]): AccessGroupView => ({
  id: r.id,
  name: r.name,
  inbound_ids: inboundIds,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

/** Members of these groups, by group, each list sorted by inbound id. */
export async function membersOf(db: Db, groupIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return out;
  const rows = await db
    .selectFrom('access_group_inbounds')
    .select(['access_group_id', 'inbound_id'])
    .where('access_group_id', 'in', groupIds)
    .orderBy('access_group_id')
    .orderBy('inbound_id')
    .execute();
  for (const r of rows) out.get(r.access_group_id)?.push(r.inbound_id);
  return out;
}

export const groupNameTaken = () => new ConflictError('an access group with this name exists', { name: 'already taken' });

/** Deduplicated; every id must name an existing inbound (errors per position). */
export async function checkInboundIds(trx: Db, ids: readonly string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const found = new Set((await trx.selectFrom('inbounds').select('id').where('id', 'in', unique).execute()).map((r) => r.id));
  const errors: Record<string, string> = {};
  ids.forEach((id, i) => {
    if (!found.has(id)) errors[`inbound_ids.${i}`] = `no such inbound: ${id}`;
  });
  if (Object.keys(errors).length > 0) throw new ValidationError('unknown inbounds', errors);
  return unique.sort();
}

export const unknownInboundRace = () =>
  new ValidationError('unknown inbounds', { inbound_ids: 'an inbound was deleted meanwhile; check the list and retry' });
