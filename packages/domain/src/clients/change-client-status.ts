import type { ClientRow, ClientStatus, Db } from '@svc/db';
import { revokeAllSessions } from '../auth/sessions.ts';
import { NotFoundError } from '../errors.ts';
import { recordEvent } from '../events/record-event.ts';
import { bumpNodeRevisions, nodesOfClients } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';
import { type ClientEvent, clientTransition, clientTransitionEvent } from './client-status.ts';
import { type ClientView, clientView } from './client-view.ts';

/**
 * Side effects of every client status change, inside the changing transaction: whether a
 * client's subscriptions run on nodes depends on the client being active, so the nodes of
 * all its subscriptions get a new revision; a client that is no longer active keeps no
 * session (its access tokens still live out their 15 minutes; the portal re-checks status);
 * the move's event (clientTransitionEvent) is recorded.
 */
export async function afterClientStatusChange(uow: UnitOfWork, clientId: string, from: ClientStatus, to: ClientStatus, now: Date) {
  return bumpNodeRevisions(uow, await clientStatusConsequences(uow, clientId, from, to, now));
}

/**
 * afterClientStatusChange without the revision bump: the sessions, the event, and the nodes that
 * must hear of it (returned; a bulk job bumps each once for the whole batch).
 */
export async function clientStatusConsequences(uow: UnitOfWork, clientId: string, from: ClientStatus, to: ClientStatus, now: Date) {
  if (from === to) return [];
  if (to !== 'active') await revokeAllSessions(uow.db, { type: 'client', id: clientId }, `client_${to}`, now);
  const raises = clientTransitionEvent(from, to);
  if (raises) {
    const { email } = await uow.db.selectFrom('clients').select('email').where('id', '=', clientId).executeTakeFirstOrThrow();
    const subject = { client_id: clientId, email };
    await recordEvent(
      uow,
      raises === 'client.approved'
        ? { type: raises, payload: { ...subject, previous_status: from as 'pending' | 'rejected' } }
        : { type: raises, payload: subject },
      now,
    );
  }
  return nodesOfClients(uow.db, [clientId]);
}

export async function lockClient(trx: Db, id: string): Promise<ClientRow> {
  const row = await trx.selectFrom('clients').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!row) throw new NotFoundError('client', id);
  return row;
}

async function decide(ctx: DomainContext, id: string, event: 'approve' | 'reject'): Promise<ClientView> {
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    uow.subscriptionLinksChanged();
    const current = await lockClient(trx, id);
    const to = clientTransition(current.status, event satisfies ClientEvent);
    const now = ctx.clock.now();
    // Approval keeps email_verified_at as it is: the applicant confirms the address separately.
    const row = await trx
      .updateTable('clients')
      .set({ status: to, updated_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const bumped = await afterClientStatusChange(uow, id, current.status, to, now);
    uow.audit({
      action: event === 'approve' ? 'client.approved' : 'client.rejected',
      entity_type: 'client',
      entity_id: id,
      details: { status: { from: current.status, to }, ...(bumped.length ? { nodes_bumped: bumped } : {}) },
    });
    return clientView(row);
  });
}

/** POST /clients/{id}/approve: pending or rejected -> active (application mode's queue; spec 3.1 rule 3), else 409. */
export const approveClient = (ctx: DomainContext, id: string) => decide(ctx, id, 'approve');

/** POST /clients/{id}/reject: pending -> rejected, else 409. */
export const rejectClient = (ctx: DomainContext, id: string) => decide(ctx, id, 'reject');
