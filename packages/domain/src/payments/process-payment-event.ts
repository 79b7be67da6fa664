import type { ProviderPaymentStatus } from '../billing/providers/port.ts';
import { PROVIDER_PAYMENT_STATUSES } from '../billing/providers/port.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { idsDisagree, namesPayment } from './reported-payment.ts';
import { settlePayment } from './settle-payment.ts';

/** An event still unprocessed this long after it was stored lost its job (a crash): the sweep takes it. */
export const STRANDED_EVENT_MS = 30_000;

/**
 * Applies one stored provider event (the `payments.process-event` job, and the sweep for events
 * whose job was lost). Idempotent: the event row is locked and processed once (processed_at);
 * the payment it names is locked and settled by the one rule (settlePayment), so a replayed,
 * duplicated or out-of-order event changes nothing it should not. The payment is found by our
 * id carried through the provider (metadata / payload), else by the provider's payment id, among
 * the event's provider's payments; it is settled only when the event names it by both ids
 * (namesPayment), else the event's outcome is `ids-mismatch` and an audit entry says what was
 * expected. Returns the outcome, or null when the event was already processed (or is gone).
 */
export async function processPaymentEvent(ctx: DomainContext, id: string): Promise<string | null> {
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const ev = await trx.selectFrom('payment_events').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!ev || ev.processed_at !== null) return null;
    const ofProvider = () => trx.selectFrom('payments').selectAll().where('provider_id', '=', ev.provider_id);
    let payment = ev.payment_id ? await ofProvider().where('id', '=', ev.payment_id).forUpdate().executeTakeFirst() : undefined;
    payment ??= await ofProvider().where('provider_payment_id', '=', ev.provider_payment_id).forUpdate().executeTakeFirst();
    let outcome: string;
    if (!payment) {
      outcome = 'unknown-payment';
      ctx.log.warn(
        { provider_id: ev.provider_id, event_id: ev.event_id },
        'payment webhook about a payment this installation does not know',
      );
    } else if (!namesPayment(payment, ev)) {
      outcome = 'ids-mismatch';
      uow.audit({
        action: 'payment.mismatch',
        entity_type: 'payment',
        entity_id: payment.id,
        details: { source: 'webhook', event_id: ev.event_id, ...idsDisagree(payment, ev) },
      });
      ctx.log.warn(
        { payment_id: payment.id, provider_id: ev.provider_id, event_id: ev.event_id },
        "payment webhook names our payment and another checkout's id (or one without ours); left as it is",
      );
    } else if (!(PROVIDER_PAYMENT_STATUSES as string[]).includes(ev.status)) {
      outcome = 'unknown-status';
    } else {
      const settled = await settlePayment(
        ctx,
        uow,
        payment,
        {
          status: ev.status as ProviderPaymentStatus,
          amount: ev.amount === null ? undefined : Number(ev.amount),
          currency: ev.currency ?? undefined,
        },
        'webhook',
      );
      outcome = settled.outcome;
    }
    await trx
      .updateTable('payment_events')
      .set({ processed_at: ctx.clock.now(), outcome, payment_id: payment?.id ?? ev.payment_id })
      .where('id', '=', id)
      .execute();
    return outcome;
  });
}

/** Events stored but not processed after STRANDED_EVENT_MS (their job was lost): processed now, oldest first. */
export async function processStrandedPaymentEvents(ctx: DomainContext, limit = 100): Promise<number> {
  const before = new Date(ctx.clock.now().getTime() - STRANDED_EVENT_MS);
  const rows = await ctx.db
    .selectFrom('payment_events')
    .select('id')
    .where('processed_at', 'is', null)
    .where('received_at', '<', before)
    .orderBy('received_at')
    .limit(limit)
    .execute();
  let done = 0;
  for (const r of rows) if ((await processPaymentEvent(ctx, r.id)) !== null) done++;
  return done;
}
