import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { blockedError, collectBlockers, hasBlockers, isForeignKeyViolation } from './references.ts';

const PLAN_REFS = [
  { table: 'payments', column: 'plan_id' },
  { table: 'subscriptions', column: 'plan_id' },
] as const;
const ARCHIVE_HINT = 'archive it instead (PATCH {"archived": true}) to stop selling it and keep its history';

/**
 * Refused (409) while payments reference the plan, or subscriptions that were bought with it
 * (subscriptions.plan_id has no foreign key, so this check is what keeps it meaningful).
 * Its access-group grants go with it.
 */
export async function deletePlan(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    // FOR UPDATE waits for a payment being inserted right now (its foreign key holds a key-share lock).
    const current = await trx.selectFrom('plans').select(['id', 'name']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('plan', id);
    const blockers = await collectBlockers(trx, id, PLAN_REFS);
    if (hasBlockers(blockers)) throw blockedError(`plan ${id}`, blockers, ARCHIVE_HINT);
    await trx.deleteFrom('plans').where('id', '=', id).execute();
    uow.audit({ action: 'plan.deleted', entity_type: 'plan', entity_id: id, details: { name: current.name } });
  }).catch(async (err: unknown) => {
    // Defensive: the row lock makes this unreachable, but a restrict violation must answer 409, not 500.
    if (isForeignKeyViolation(err)) throw blockedError(`plan ${id}`, await collectBlockers(ctx.db, id, PLAN_REFS), ARCHIVE_HINT);
    throw err;
  });
}
