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
 * A payment, as checkout or a provider webhook will write it. Payments have no use case yet
 * (the payments issue), so the row is written here; its client, plan and provider are made
 * through the domain unless given.
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
 * A subscription bought with the plan. Buying has no use case yet (the payments issue makes the
 * subscription and records the plan), so the plan is set on a subscription made by the domain.
 */
export async function subscriptionBoughtWith(ctx: DomainContext, planId: string): Promise<string> {
  const sub = await fixtures(ctx).subscription();
  await ctx.db.updateTable('subscriptions').set({ plan_id: planId }).where('id', '=', sub.id).execute();
  return sub.id;
}
