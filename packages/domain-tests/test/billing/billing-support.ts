import { randomUUID } from 'node:crypto';
import type { PaymentStatus } from '@svc/db';
import { type DomainContext, newId } from '@svc/domain';
import { fixtures } from '@svc/testkit';

export const SECRET_KEY = `sk_test_${randomUUID().replaceAll('-', '')}`;
export const WEBHOOK_SECRET = `whsec_${randomUUID().replaceAll('-', '')}`;
/** A stripe provider with every setting. */
export const stripe = {
  kind: 'stripe',
  name: 'Stripe',
  config: { secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET, publishable_key: 'pk_test_abc' },
};

/**
 * A payment row in any status, written directly. It predates checkout (`startCheckout`, tested
 * in ../payments/ with the state machine) and stays a shortcut for tests that only need a
 * payment to reference a plan or provider, in a status no provider was asked for. Its client,
 * plan and provider are made through the domain unless given.
 */
export async function payment(
  ctx: DomainContext,
  refs: { plan_id?: string; provider_id?: string; client_id?: string; subscription_id?: string | null },
  status: PaymentStatus = 'succeeded',
): Promise<string> {
  const now = ctx.clock.now();
  const id = newId('pay', now.getTime());
  await ctx.db
    .insertInto('payments')
    .values({
      id,
      client_id: refs.client_id ?? (await fixtures(ctx).client()).id,
      plan_id: refs.plan_id ?? (await fixtures(ctx).plan()).id,
      provider_id: refs.provider_id ?? (await fixtures(ctx).paymentProvider()).id,
      subscription_id: refs.subscription_id ?? null,
      amount: 500,
      currency: 'EUR',
      status,
      provider_payment_id: `pi_${randomUUID()}`,
      idempotency_key: null,
      checkout_url: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

/**
 * A subscription that records the plan it was bought with, without a purchase: a payment's
 * effect (payments/payment-effect.ts) sets `plan_id` the same way on the subscription it makes.
 */
export async function subscriptionBoughtWith(ctx: DomainContext, planId: string): Promise<string> {
  const sub = await fixtures(ctx).subscription();
  await ctx.db.updateTable('subscriptions').set({ plan_id: planId }).where('id', '=', sub.id).execute();
  return sub.id;
}
