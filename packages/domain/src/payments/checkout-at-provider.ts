import type { PaymentProviderRow, PaymentRow } from '@svc/db';
import { BadGatewayError, NotFoundError } from '../errors.ts';
import { recordEvent } from '../events/record-event.ts';
import type { PortalCtx } from '../portal/portal-subscriptions.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { publicBaseUrl } from '../shared/public-url.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';
import { type CheckoutView, checkoutView } from './checkout-view.ts';
import { providerPort, providerRow } from './provider-port.ts';
import { pendingDeadline } from './recheck-payments.ts';
import { firstRecheckAt } from './recheck-schedule.ts';

/**
 * The return address of the provider's page: billing.return_url, else the portal web app's page
 * of the payment (/portal/payments/{id}), which shows its status live until it settles. The bare
 * page /portal/v1/checkout/return stays for installations that name it.
 */
export function checkoutReturnUrl(ctx: Pick<PortalCtx, 'config'>, paymentId: string, outcome: 'success' | 'canceled'): string {
  const template = ctx.config.billing.return_url ?? `${publicBaseUrl(ctx.config)}/portal/payments/{payment_id}`;
  const url = new URL(template.replaceAll('{payment_id}', encodeURIComponent(paymentId)));
  url.searchParams.set('outcome', outcome);
  return url.toString();
}

/**
 * The second step of a checkout (startCheckout): the provider's checkout is made outside any
 * transaction (a provider's API may take seconds), then stored in a unit of work, once: of a
 * request and one that took over from it, the first to store wins and the other answers its row.
 *
 * A manual payment has nobody behind it who will ever report on it: an admin must see that the
 * money arrived and confirm it. So its deadline (billing.manual_max_days after the checkout,
 * when the worker expires it unconfirmed) is stored as its `expires_at`, for the payer's and the
 * admin's views alike, and `payment.awaiting_confirmation` is recorded in the same unit: owners
 * are mailed by default and webhooks get it like every event (docs/payments.md).
 */
export async function makeProviderCheckout(ctx: PortalCtx, row: PaymentRow, email: string): Promise<CheckoutView> {
  try {
    const provider = await providerRow(ctx.db, row.provider_id);
    if (!provider.enabled) throw new NotFoundError('payment method', provider.id);
    const plan = await ctx.db.selectFrom('plans').select('name').where('id', '=', row.plan_id).executeTakeFirstOrThrow();
    const result = await providerPort(ctx, provider).createCheckout({
      payment_id: row.id,
      amount: Number(row.amount),
      currency: row.currency,
      description: plan.name,
      client_email: email,
      success_url: checkoutReturnUrl(ctx, row.id, 'success'),
      cancel_url: checkoutReturnUrl(ctx, row.id, 'canceled'),
      idempotency_key: `checkout-${row.id}`,
    });
    const manual = provider.kind === 'manual';
    const expires = result.expires_at
      ? new Date(result.expires_at)
      : manual
        ? pendingDeadline({ ...row, expires_at: null }, provider.kind, ctx.config.billing)
        : null;
    const done = await unitOfWork(ctx, async (uow) => {
      const now = ctx.clock.now();
      const stored = await uow.db
        .updateTable('payments')
        .set({
          provider_payment_id: result.provider_payment_id,
          checkout_url: result.checkout_url,
          instructions: result.instructions ?? null,
          expires_at: expires,
          next_check_at: firstRecheckAt(now),
          updated_at: now,
        })
        .where('id', '=', row.id)
        .where('provider_payment_id', 'is', null)
        .returningAll()
        .executeTakeFirst();
      if (manual && stored?.expires_at)
        await awaitingConfirmation(uow, stored, stored.expires_at, { email, plan: plan.name, provider }, now);
      return stored;
    }).catch((err: unknown) => {
      if (isUniqueViolation(err, 'payments_provider_payment'))
        throw anotherPaymentsCheckout(ctx, row, provider, result.provider_payment_id);
      throw err;
    });
    // Another request finished first (it took over from this one): its answer is the answer.
    return checkoutView(done ?? (await ctx.db.selectFrom('payments').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow()));
  } catch (err) {
    await ctx.db
      .updateTable('payments')
      .set({ checkout_started_at: null })
      .where('id', '=', row.id)
      .where('provider_payment_id', 'is', null)
      .execute()
      .catch(() => undefined);
    throw err;
  }
}

/**
 * The provider answered with the id of a checkout another payment of ours already holds (unique
 * per provider): nothing is stored, the payment stays without a checkout (the caller clears its
 * claim), and the payer gets a 502: the same Idempotency-Key asks the provider again, and a
 * checkout never stored fails after UNCREATED_CHECKOUT_MS like any other. Logged as an error:
 * a provider (or a proxy before it) that mixes up checkouts is for the operator to look at.
 */
function anotherPaymentsCheckout(ctx: PortalCtx, row: PaymentRow, provider: PaymentProviderRow, providerPaymentId: string) {
  ctx.log.error(
    { payment_id: row.id, provider_id: provider.id, provider_payment_id: providerPaymentId.slice(0, 255) },
    "the payment provider answered a checkout with the id of another payment's checkout; nothing stored",
  );
  return new BadGatewayError(
    `${provider.name.slice(0, 80)} answered with a checkout that belongs to another payment; nothing was stored: retry with the same Idempotency-Key later, or use another payment method`,
  );
}

/** What an owner needs to act on a manual payment: who pays, what for, how much, by when. */
function awaitingConfirmation(
  uow: UnitOfWork,
  p: PaymentRow,
  deadline: Date,
  about: { email: string; plan: string; provider: PaymentProviderRow },
  now: Date,
): Promise<string> {
  return recordEvent(
    uow,
    {
      type: 'payment.awaiting_confirmation',
      payload: {
        payment_id: p.id,
        client_id: p.client_id,
        client_email: about.email,
        plan_id: p.plan_id,
        plan_name: about.plan,
        provider_id: about.provider.id,
        provider_name: about.provider.name,
        subscription_id: p.subscription_id,
        amount: Number(p.amount),
        currency: p.currency,
        expires_at: deadline.toISOString(),
      },
    },
    now,
  );
}
