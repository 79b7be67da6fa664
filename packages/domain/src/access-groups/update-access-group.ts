import { z } from 'zod';
import { NotFoundError } from '../errors.ts';
import { bumpNodeRevisions, nodesOfInbounds } from '../fleet/revisions.ts';
import { graceNodeGroups } from '../fleet/serving.ts';
import type { DomainContext } from '../shared/context.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../shared/db-errors.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type AccessGroupView, accessGroupView, checkInboundIds, groupNameTaken, membersOf, unknownInboundRace } from './access-group.ts';
import { GroupName, InboundIds } from './access-group-fields.ts';
import { getAccessGroup } from './read-access-groups.ts';

/** PATCH /access-groups/{id}: a merge; `inbound_ids` replaces the whole list (spec 4.4). */
export const UpdateAccessGroupInput = z
  .object({ name: GroupName.optional(), inbound_ids: InboundIds.optional().meta({ description: 'replaces the whole list' }) })
  .strict()
  .brand<'UpdateAccessGroupInput'>();
export type UpdateAccessGroupInput = z.output<typeof UpdateAccessGroupInput>;

/**
 * PATCH merge; `inbound_ids` replaces the membership. Exactly the nodes of the added and the
 * removed inbounds get a new revision: the subscriptions granted this group gain or lose users
 * there, and nowhere else (unchanged members' nodes already run them).
 */
export async function updateAccessGroup(ctx: DomainContext, id: string, input: UpdateAccessGroupInput): Promise<AccessGroupView> {
  if (isEmptyPatch(input)) return getAccessGroup(ctx, id);
  const { name } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx.selectFrom('access_groups').selectAll().where('id', '=', id).forNoKeyUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('access group', id);
    if (name !== undefined && name !== current.name) {
      const taken = await trx.selectFrom('access_groups').select('id').where('name', '=', name).executeTakeFirst();
      if (taken) throw groupNameTaken();
    }
    const before = (await membersOf(trx, [id])).get(id) ?? [];
    let after = before;
    let added: string[] = [];
    let removed: string[] = [];
    if (input.inbound_ids !== undefined) {
      after = await checkInboundIds(trx, input.inbound_ids);
      const was = new Set(before);
      const will = new Set(after);
      added = after.filter((i) => !was.has(i));
      removed = before.filter((i) => !will.has(i));
      // Nodes of removed inbounds are read before the rows go (the inbounds themselves stay).
      if (removed.length > 0)
        await trx.deleteFrom('access_group_inbounds').where('access_group_id', '=', id).where('inbound_id', 'in', removed).execute();
      if (added.length > 0)
        await trx
          .insertInto('access_group_inbounds')
          .values(added.map((inbound_id) => ({ access_group_id: id, inbound_id })))
          .execute()
          .catch((err: unknown) => {
            if (isForeignKeyViolation(err)) throw unknownInboundRace();
            throw err;
          });
    }
    const row = await trx
      .updateTable('access_groups')
      .set({ ...(name !== undefined ? { name } : {}), updated_at: ctx.clock.now() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err, 'access_groups_name_key')) throw groupNameTaken();
        throw err;
      });
    // The nodes of removed inbounds may still send what the group's members used before.
    await graceNodeGroups(
      uow,
      ctx.clock.now(),
      (await nodesOfInbounds(trx, removed)).map((node_id) => ({ node_id, access_group_id: id })),
    );
    const nodes = await bumpNodeRevisions(uow, await nodesOfInbounds(trx, [...added, ...removed]));
    const changed = Object.keys(input).filter((k) => input[k as keyof UpdateAccessGroupInput] !== undefined);
    uow.audit({
      action: 'access_group.updated',
      entity_type: 'access_group',
      entity_id: id,
      details: {
        changed,
        ...(name !== undefined && name !== current.name ? { name: { from: current.name, to: name } } : {}),
        ...(input.inbound_ids !== undefined ? { added, removed } : {}),
        ...(nodes.length > 0 ? { nodes_bumped: nodes } : {}),
      },
    });
    return accessGroupView(row, after);
  });
}
