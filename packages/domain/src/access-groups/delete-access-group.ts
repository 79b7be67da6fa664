import { ConflictError, NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { idList, isForeignKeyViolation } from '../shared/db-errors.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { membersOf } from './access-group.ts';

/**
 * Refused (409) while subscriptions or plans reference the group. With no subscription granted
 * it, no node runs anything for it, so no revision moves.
 */
export async function deleteAccessGroup(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    // FOR UPDATE waits for (and then blocks) subscriptions and plans being granted the group right now.
    const current = await trx.selectFrom('access_groups').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('access group', id);
    const subscriptions = await trx
      .selectFrom('subscription_access_groups')
      .select('subscription_id as id')
      .where('access_group_id', '=', id)
      .orderBy('subscription_id')
      .limit(100)
      .execute();
    const plans = await trx
      .selectFrom('plan_access_groups')
      .select('plan_id as id')
      .where('access_group_id', '=', id)
      .orderBy('plan_id')
      .limit(100)
      .execute();
    if (subscriptions.length > 0 || plans.length > 0) {
      throw groupInUse(
        subscriptions.map((r) => r.id),
        plans.map((r) => r.id),
      );
    }
    const members = (await membersOf(trx, [id])).get(id) ?? [];
    await trx
      .deleteFrom('access_groups')
      .where('id', '=', id)
      .execute()
      .catch((err: unknown) => {
        if (isForeignKeyViolation(err)) throw groupInUse([], []);
        throw err;
      });
    uow.audit({
      action: 'access_group.deleted',
      entity_type: 'access_group',
      entity_id: id,
      details: { name: current.name, inbound_ids: members },
    });
  });
}

function groupInUse(subscriptions: string[], plans: string[]): ConflictError {
  const parts = [
    ...(subscriptions.length > 0 ? [`subscriptions (${idList(subscriptions)})`] : []),
    ...(plans.length > 0 ? [`plans (${idList(plans)})`] : []),
  ];
  return new ConflictError(
    `the access group is granted by ${parts.length > 0 ? parts.join(' and ') : 'subscriptions or plans'}; remove it from them first`,
    undefined,
    { blocked_by: { ...(subscriptions.length > 0 ? { subscriptions } : {}), ...(plans.length > 0 ? { plans } : {}) } },
  );
}
