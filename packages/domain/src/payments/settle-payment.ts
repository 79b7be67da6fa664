import type { PaymentRow } from '@svc/db';
import type { ProviderPaymentStatus } from '../billing/providers/port.ts';
import { recordEvent } from '../events/record-event.ts';
import { queueMailAfterCommit } from '../notifications/queue-mail.ts';
import type { DomainContext } from '../shared/context.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { applyPaymentEffect, revertPaymentEffect } from './payment-effect.ts';
import { paymentMail } from './payment-mails.ts';
import { paymentTransition } from './payment-transition.ts';

/** Who reported the state: a verified webhook, the worker's re-read, an admin, or the expiry rule. */
export type SettleSource = 'webhook' | 're-read' | 'admin' | 'expiry';

export interface ReportedPaymentState {
  status: ProviderPaymentStatus;
  /** Minor units, when the report says. */
  amount?: number | undefined;
  currency?: string | undefined;
  /** Why, in words (stored as status_reason). */
  reason?: string | undefined;
}

/**
 * What settling did: `applied` (the status moved; the plan's effect applied or taken back with
 * it), `unchanged` (the same state again, or a stale one: replays and out-of-order reports
 * land here), `mismatch` (a success for another amount or currency than the payment's),
 * `incomplete` (a provider's success that does not say its amount and currency). On the last
 * two nothing changes and an audit entry `payment.mismatch` says what was expected and reported.
 */
export type SettleOutcome = 'applied' | 'unchanged' | 'mismatch' | 'incomplete';

/** Who reports for a provider: their word on a success must carry the amount and currency paid. */
const PROVIDER_SOURCES: ReadonlySet<SettleSource> = new Set(['webhook', 're-read']);

/**
 * The one step that moves a payment's status, whoever reports it. `payment` must be locked
 * (FOR UPDATE) in `uow`, so two reports of the same payment settle one after the other. The
 * rule is `paymentTransition`; the plan's effect is applied at most once (applied_at) and taken
 * back at most once (reverted_at), in the same transaction as the status.
 */
export async function settlePayment(
  ctx: DomainContext,
  uow: UnitOfWork,
  payment: PaymentRow,
  reported: ReportedPaymentState,
  source: SettleSource,
): Promise<{ outcome: SettleOutcome; payment: PaymentRow }> {
  const trx = uow.db;
  const now = ctx.clock.now();
  const t = paymentTransition(payment.status, reported.status);
  if (!t) return { outcome: 'unchanged', payment };
  const amount = Number(payment.amount);
  const refused = t.effect === 'apply' ? amountRefusal(payment, reported, source) : null;
  if (refused) {
    uow.audit({
      action: 'payment.mismatch',
      entity_type: 'payment',
      entity_id: payment.id,
      details: {
        source,
        reason: refused === 'incomplete' ? 'no amount' : 'amount',
        expected: { amount, currency: payment.currency },
        reported: { amount: reported.amount ?? null, currency: reported.currency ?? null },
      },
    });
    ctx.log.warn(
      { payment_id: payment.id, expected: amount, reported: reported.amount, currency: reported.currency, source },
      refused === 'incomplete'
        ? 'payment reported as paid without its amount or currency; left as it is'
        : 'payment reported as paid with another amount or currency; left as it is',
    );
    return { outcome: refused, payment };
  }

  const plan = await trx.selectFrom('plans').selectAll().where('id', '=', payment.plan_id).executeTakeFirstOrThrow();
  let applied = payment.applied_effect;
  let appliedAt = payment.applied_at;
  let revertedAt = payment.reverted_at;
  let effectDone: 'applied' | 'reverted' | null = null;
  if (t.effect === 'apply' && appliedAt === null) {
    applied = await applyPaymentEffect(ctx, uow, payment, plan, now);
    appliedAt = now;
    effectDone = 'applied';
  } else if (t.effect === 'revert' && appliedAt !== null && revertedAt === null && applied) {
    await revertPaymentEffect(uow, applied, plan, now);
    revertedAt = now;
    effectDone = 'reverted';
  }
  const row = await trx
    .updateTable('payments')
    .set({
      status: t.status,
      status_reason: reported.reason ?? defaultReason(t.status, source),
      ...(t.status === 'succeeded' ? { paid_at: now } : {}),
      applied_at: appliedAt,
      reverted_at: revertedAt,
      applied_effect: applied ? JSON.stringify(applied) : null,
      subscription_id: applied?.subscription_id ?? payment.subscription_id,
      next_check_at: null,
      updated_at: now,
    })
    .where('id', '=', payment.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  uow.audit({
    action: `payment.${t.status}`,
    entity_type: 'payment',
    entity_id: payment.id,
    details: {
      source,
      status: { from: payment.status, to: t.status },
      provider_payment_id: payment.provider_payment_id,
      subscription_id: row.subscription_id,
      ...(effectDone ? { effect: effectDone } : {}),
      ...(effectDone === 'applied' && applied?.created ? { subscription_created: true } : {}),
    },
  });
  if (t.status === 'succeeded' || t.status === 'refunded') {
    // The customer hears of it: what the payment bought (or no longer buys) and until when.
    const client = await trx.selectFrom('clients').select('email').where('id', '=', row.client_id).executeTakeFirst();
    const sub = row.subscription_id
      ? await trx.selectFrom('subscriptions').select('expires_at').where('id', '=', row.subscription_id).executeTakeFirst()
      : undefined;
    if (client && (t.status === 'succeeded' ? effectDone === 'applied' : true))
      queueMailAfterCommit(uow, paymentMail(client.email, row, plan.name, sub ? sub.expires_at : undefined, now));
  }
  if (t.status === 'succeeded') {
    await recordEvent(
      uow,
      {
        type: 'payment.succeeded',
        payload: {
          payment_id: row.id,
          client_id: row.client_id,
          plan_id: row.plan_id,
          provider_id: row.provider_id,
          subscription_id: row.subscription_id,
          amount,
          currency: row.currency,
        },
      },
      now,
    );
  } else if (t.status === 'refunded') {
    await recordEvent(
      uow,
      {
        type: 'payment.refunded',
        payload: { payment_id: row.id, client_id: row.client_id, subscription_id: row.subscription_id, amount, currency: row.currency },
      },
      now,
    );
  }
  return { outcome: 'applied', payment: row };
}

/**
 * Why a success may not apply the plan, or null: an amount or currency that differs from the
 * payment's, whoever reports it; from a provider (webhook, re-read), also one that does not say
 * them (an admin confirming a manual payment has seen the money and reports none).
 */
function amountRefusal(payment: PaymentRow, reported: ReportedPaymentState, source: SettleSource): 'mismatch' | 'incomplete' | null {
  if (PROVIDER_SOURCES.has(source) && (reported.amount === undefined || reported.currency === undefined)) return 'incomplete';
  if (reported.amount !== undefined && reported.amount !== Number(payment.amount)) return 'mismatch';
  if (reported.currency !== undefined && reported.currency.toUpperCase() !== payment.currency) return 'mismatch';
  return null;
}

function defaultReason(status: string, source: SettleSource): string | null {
  if (source === 'expiry') return 'the provider took no payment in time';
  if (status === 'succeeded') return null;
  return source === 'admin' ? `${status} by an admin` : `${status} at the provider`;
}
