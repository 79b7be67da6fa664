import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { blockedError, collectBlockers, hasBlockers, isForeignKeyViolation } from './references.ts';

const PROVIDER_REFS = [{ table: 'payments', column: 'provider_id' }] as const;
const HINT = 'disable it instead (PATCH {"enabled": false})';

/** Refused (409) while payments reference the provider. Its sealed secrets go with the row. */
export async function deletePaymentProvider(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx
      .selectFrom('payment_providers')
      .select(['id', 'kind', 'name'])
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw new NotFoundError('payment provider', id);
    const blockers = await collectBlockers(trx, id, PROVIDER_REFS);
    if (hasBlockers(blockers)) throw blockedError(`payment provider ${id}`, blockers, HINT);
    await trx.deleteFrom('payment_providers').where('id', '=', id).execute();
    uow.audit({
      action: 'payment_provider.deleted',
      entity_type: 'payment_provider',
      entity_id: id,
      details: { kind: current.kind, name: current.name },
    });
  }).catch(async (err: unknown) => {
    // Defensive: the row lock makes this unreachable, but a restrict violation must answer 409, not 500.
    if (isForeignKeyViolation(err)) throw blockedError(`payment provider ${id}`, await collectBlockers(ctx.db, id, PROVIDER_REFS), HINT);
    throw err;
  });
}
