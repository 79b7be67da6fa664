import { z } from 'zod';
import type { DomainContext } from '../shared/context.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { type AccessGroupView, accessGroupView, checkInboundIds, groupNameTaken, unknownInboundRace } from './access-group.ts';
import { GroupName, InboundIds } from './access-group-fields.ts';

/** POST /access-groups, fixtures: a set of inbounds granted together. */
export const CreateAccessGroupInput = z
  .object({ name: GroupName, inbound_ids: InboundIds.default([]) })
  .strict()
  .brand<'CreateAccessGroupInput'>();
export type CreateAccessGroupInput = z.output<typeof CreateAccessGroupInput>;

/**
 * No revision moves: nodes run a group's inbounds for the subscriptions granted the group, and
 * no subscription can be granted a group that did not exist.
 */
export async function createAccessGroup(ctx: DomainContext, input: CreateAccessGroupInput): Promise<AccessGroupView> {
  const { name } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const taken = await trx.selectFrom('access_groups').select('id').where('name', '=', name).executeTakeFirst();
    if (taken) throw groupNameTaken();
    const inboundIds = await checkInboundIds(trx, input.inbound_ids);
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('access_groups')
      .values({ id: newId('agr', now.getTime()), name, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err, 'access_groups_name_key')) throw groupNameTaken();
        throw err;
      });
    if (inboundIds.length > 0) {
      await trx
        .insertInto('access_group_inbounds')
        .values(inboundIds.map((inbound_id) => ({ access_group_id: row.id, inbound_id })))
        .execute()
        .catch((err: unknown) => {
          if (isForeignKeyViolation(err)) throw unknownInboundRace();
          throw err;
        });
    }
    uow.audit({
      action: 'access_group.created',
      entity_type: 'access_group',
      entity_id: row.id,
      details: { name, inbound_ids: inboundIds },
    });
    return accessGroupView(row, inboundIds);
  });
}
