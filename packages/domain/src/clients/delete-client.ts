import type { Db } from '@svc/db';
import { ConflictError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';
import { lockClient } from './change-client-status.ts';

const BLOCKERS_SHOWN = 100;

/**
 * Deletes a client and its sessions. Refused (409) while subscriptions or payments still
 * reference it: delete those first (payments are history; a client with payments stays).
 */
export async function deleteClient(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    // FOR UPDATE conflicts with the FOR KEY SHARE a concurrent subscription create takes on
    // the client, so no subscription can appear between this check and the delete.
    const current = await lockClient(trx, id);
    const { subs, payments } = await clientDeleteBlockers(trx, id);
    if (subs.length > 0 || payments.length > 0) {
      const blocked_by: Record<string, string[]> = {};
      if (subs.length) blocked_by.subscriptions = subs.map((r) => r.id);
      if (payments.length) blocked_by.payments = payments.map((r) => r.id);
      const what = [subs.length ? 'subscriptions' : null, payments.length ? 'payments' : null].filter(Boolean).join(' and ');
      throw new ConflictError(`the client still has ${what}; delete them first`, undefined, { blocked_by });
    }
    await removeClient(uow, current);
  });
}

/** What keeps a client from being deleted: its subscriptions and payments (the first 100 of each). */
export async function clientDeleteBlockers(trx: Db, id: string) {
  const subs = await trx.selectFrom('subscriptions').select('id').where('client_id', '=', id).orderBy('id').limit(BLOCKERS_SHOWN).execute();
  const payments = await trx.selectFrom('payments').select('id').where('client_id', '=', id).orderBy('id').limit(BLOCKERS_SHOWN).execute();
  return { subs, payments };
}

/** Deletes a client its blockers no longer hold (locked by the caller), with its sessions; audited. */
export async function removeClient(uow: UnitOfWork, current: { id: string; email: string; status: string }): Promise<void> {
  const trx = uow.db;
  const id = current.id;
  await trx.deleteFrom('sessions').where('subject_type', '=', 'client').where('subject_id', '=', id).execute();
  await trx.deleteFrom('clients').where('id', '=', id).execute();
  uow.audit({
    action: 'client.deleted',
    entity_type: 'client',
    entity_id: id,
    details: { email: current.email, status: current.status },
  });
}
