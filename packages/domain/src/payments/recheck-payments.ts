import type { PaymentRow } from '@svc/db';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { providerPort } from './provider-port.ts';
import { nextRecheckAt } from './recheck-schedule.ts';
import { idsDisagree, namesPayment } from './reported-payment.ts';
import { type ReportedPaymentState, settlePayment } from './settle-payment.ts';

const HOUR_MS = 3600_000;
/** A payment whose checkout was never created (the provider failed, the payer gave up) ends after this long. */
export const UNCREATED_CHECKOUT_MS = HOUR_MS;

/**
 * When a pending payment is given up on: the provider's own expiry when it named one, else
 * billing.pending_max_hours after the checkout (billing.manual_max_days for manual payments,
 * which wait for an admin).
 */
export function pendingDeadline(row: PaymentRow, kind: string, billing: { pending_max_hours: number; manual_max_days: number }): Date {
  if (row.expires_at) return row.expires_at;
  const span = kind === 'manual' ? billing.manual_max_days * 24 * HOUR_MS : billing.pending_max_hours * HOUR_MS;
  return new Date(row.created_at.getTime() + span);
}

export interface RecheckResult {
  checked: number;
  settled: number;
  expired: number;
}

/**
 * The worker's re-read (issue 15 item 5): pending payments never stay pending forever. Each
 * payment due (next_check_at) is read from its provider (outside any transaction), then, under
 * a lock, settled by what the provider says; still pending and past its deadline, it expires
 * (after that last read: a payment made at the last moment is not lost, and a success reported
 * later still applies); otherwise its next read is scheduled with backoff. A checkout never
 * created within UNCREATED_CHECKOUT_MS fails. A read that fails is no news, and so is one that
 * does not name the payment by both ids (namesPayment).
 */
export async function recheckDuePayments(ctx: DomainContext, limit = 50): Promise<RecheckResult> {
  const now = ctx.clock.now();
  const due = await ctx.db
    .selectFrom('payments')
    .select('id')
    .where('status', '=', 'pending')
    .where((eb) =>
      eb.or([
        eb('next_check_at', '<=', now),
        eb.and([eb('provider_payment_id', 'is', null), eb('created_at', '<', new Date(now.getTime() - UNCREATED_CHECKOUT_MS))]),
      ]),
    )
    .orderBy('next_check_at')
    .limit(limit)
    .execute();
  const result: RecheckResult = { checked: 0, settled: 0, expired: 0 };
  for (const { id } of due) {
    const r = await recheckPayment(ctx, id);
    if (r === null) continue;
    result.checked++;
    if (r === 'settled') result.settled++;
    if (r === 'expired') result.expired++;
  }
  return result;
}

/** One payment: read, then settle, expire, or schedule the next read. Null when it was no longer pending. */
export async function recheckPayment(ctx: DomainContext, id: string): Promise<'settled' | 'expired' | 'pending' | null> {
  const row = await ctx.db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || row.status !== 'pending') return null;
  const provider = await ctx.db.selectFrom('payment_providers').selectAll().where('id', '=', row.provider_id).executeTakeFirstOrThrow();
  let reported: ReportedPaymentState | null = null;
  if (row.provider_payment_id !== null) {
    try {
      const port = providerPort(ctx, provider);
      if (port.canFetchPayment) {
        const state = await port.fetchPayment(row.provider_payment_id);
        if (namesPayment(row, state)) reported = { status: state.status, amount: state.amount, currency: state.currency };
        else
          ctx.log.warn(
            { payment_id: id, provider_id: provider.id, reported: idsDisagree(row, state).reported },
            "the provider's re-read names another payment; taken as no news",
          );
      }
    } catch (err) {
      ctx.log.warn({ err, payment_id: id, provider_id: provider.id }, 'pending payment not re-read from its provider; tried again later');
    }
  }
  return unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const locked = await uow.db.selectFrom('payments').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!locked || locked.status !== 'pending') return null;
    if (reported && reported.status !== 'pending') {
      const s = await settlePayment(ctx, uow, locked, reported, 're-read');
      if (s.outcome === 'applied') return 'settled';
    }
    const neverCreated = locked.provider_payment_id === null && locked.created_at.getTime() < now.getTime() - UNCREATED_CHECKOUT_MS;
    if (neverCreated) {
      await settlePayment(ctx, uow, locked, { status: 'failed', reason: 'the checkout was never created at the provider' }, 'expiry');
      return 'expired';
    }
    if (now.getTime() >= pendingDeadline(locked, provider.kind, ctx.config.billing).getTime()) {
      await settlePayment(ctx, uow, locked, { status: 'expired' }, 'expiry');
      return 'expired';
    }
    await uow.db
      .updateTable('payments')
      .set({ next_check_at: nextRecheckAt(now, locked.check_attempts + 1), check_attempts: locked.check_attempts + 1 })
      .where('id', '=', id)
      .execute();
    return 'pending';
  });
}
