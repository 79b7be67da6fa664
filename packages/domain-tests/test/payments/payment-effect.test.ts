import { CheckoutInput, getSubscription, type PortalCtx, parseInput, settleManualPayment, startCheckout, withActor } from '@svc/domain';
import { TEST_OWNER } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { accessGroup } from '../customers-support.ts';
import { auditOf, fileTestbed, refusal } from '../support.ts';

// What a payment buys and what a refund takes back (docs/payments.md), at the verbs: a manual
// payment confirmed, refunded or canceled by an admin (settleManualPayment), through the one
// settling step and the subscription verbs. Each rule fails here when it is broken.
const t = fileTestbed();
const DAY = 86_400_000;
const GIB = 1024 ** 3;
const now = () => t.bed.clock.now();
const inDays = (days: number) => new Date(now().getTime() + days * DAY).toISOString();
const admin = () => withActor(t.bed.deps, TEST_OWNER);

/** A verified customer with a pending manual payment for a 30-day plan (renewing `subscriptionId`). */
async function pending(opts: { clientId?: string; subscriptionId?: string; planId?: string } = {}) {
  const clientId = opts.clientId ?? (await t.f.client()).id;
  await t.bed.deps.db.updateTable('clients').set({ email_verified_at: now() }).where('id', '=', clientId).execute();
  const group = await accessGroup(t.bed.ctx());
  const planId =
    opts.planId ??
    (await t.f.plan({ duration_days: 30, traffic_limit_bytes: 50 * GIB, access_group_ids: [group], price: 990, currency: 'EUR' })).id;
  const provider = await t.f.paymentProvider({ enabled: true });
  const portal = withActor(t.bed.deps, { type: 'client', id: clientId }) as PortalCtx;
  const { checkout } = await startCheckout(
    portal,
    `key-${Math.random()}`,
    parseInput(CheckoutInput, {
      plan_id: planId,
      provider_id: provider.id,
      ...(opts.subscriptionId ? { subscription_id: opts.subscriptionId } : {}),
    }),
  );
  return { clientId, paymentId: checkout.payment_id, planId, group };
}

const subscriptionsOf = (clientId: string) =>
  t.bed.deps.db.selectFrom('subscriptions').selectAll().where('client_id', '=', clientId).execute();

describe('what a payment buys', () => {
  it('confirmed without a subscription: a new one on the plan’s terms, 30 days from now', async () => {
    const { clientId, paymentId, planId, group } = await pending();
    const paid = await settleManualPayment(admin(), paymentId, 'confirm');
    expect(paid.status).toBe('succeeded');
    const [sub] = await subscriptionsOf(clientId);
    expect(sub).toMatchObject({ plan_id: planId, renewal: 'no_reset', status: 'active' });
    expect(paid.subscription_id).toBe(sub?.id);
    expect(await getSubscription(t.bed.ctx(), sub?.id as string)).toMatchObject({
      traffic_limit_bytes: 50 * GIB,
      access_group_ids: [group],
      expires_at: inDays(30),
    });
  });

  it('confirmed for one’s subscription: 30 days more from the later of now and its expiry; one subscription still', async () => {
    const client = await t.f.client();
    const sub = await t.f.subscription({ client_id: client.id, expires_at: new Date(now().getTime() + 5 * DAY) });
    const { paymentId } = await pending({ clientId: client.id, subscriptionId: sub.id });
    await settleManualPayment(admin(), paymentId, 'confirm');
    expect((await getSubscription(t.bed.ctx(), sub.id)).expires_at).toBe(inDays(35));
    expect(await subscriptionsOf(client.id)).toHaveLength(1);
  });

  it('confirming again answers the payment as it is and buys nothing more (applied once)', async () => {
    const { clientId, paymentId } = await pending();
    await settleManualPayment(admin(), paymentId, 'confirm');
    const first = (await subscriptionsOf(clientId))[0]?.expires_at;
    t.bed.clock.advance(DAY);
    expect((await settleManualPayment(admin(), paymentId, 'confirm')).status).toBe('succeeded');
    expect((await subscriptionsOf(clientId)).map((s) => s.expires_at)).toEqual([first]);
  });

  it('a refunded payment cannot be confirmed again: a conflict naming its status, nothing bought', async () => {
    const { clientId, paymentId } = await pending();
    await settleManualPayment(admin(), paymentId, 'confirm');
    await settleManualPayment(admin(), paymentId, 'refund');
    const before = await subscriptionsOf(clientId);
    expect(await refusal(settleManualPayment(admin(), paymentId, 'confirm'))).toMatchObject({ type: 'conflict' });
    expect(await subscriptionsOf(clientId)).toEqual(before);
  });

  it('canceled before it was paid: nothing is bought', async () => {
    const { clientId, paymentId } = await pending();
    expect((await settleManualPayment(admin(), paymentId, 'cancel')).status).toBe('canceled');
    expect(await subscriptionsOf(clientId)).toEqual([]);
  });
});

describe('what a refund takes back', () => {
  it('the time it bought, and nothing else: 30 days back, traffic and groups as they are', async () => {
    const client = await t.f.client();
    const sub = await t.f.subscription({ client_id: client.id, expires_at: new Date(now().getTime() + 5 * DAY) });
    const { paymentId } = await pending({ clientId: client.id, subscriptionId: sub.id });
    await settleManualPayment(admin(), paymentId, 'confirm');
    const bought = await getSubscription(t.bed.ctx(), sub.id);
    t.bed.clock.advance(DAY);
    expect((await settleManualPayment(admin(), paymentId, 'refund')).status).toBe('refunded');
    const after = await getSubscription(t.bed.ctx(), sub.id);
    expect(after.expires_at).toBe(new Date(new Date(bought.expires_at as string).getTime() - 30 * DAY).toISOString());
    expect(after).toMatchObject({ traffic_limit_bytes: bought.traffic_limit_bytes, access_group_ids: bought.access_group_ids });
    expect((await auditOf(t.bed.ctx(), sub.id)).map((a) => a.action)).toContain('subscription.refund-reverted');
  });

  it('a subscription the payment made keeps the time a later payment bought for it: only this payment’s time goes', async () => {
    const { clientId, paymentId, planId } = await pending();
    await settleManualPayment(admin(), paymentId, 'confirm');
    const [made] = await subscriptionsOf(clientId);
    const renewal = await pending({ clientId, subscriptionId: made?.id as string, planId });
    await settleManualPayment(admin(), renewal.paymentId, 'confirm');
    expect((await getSubscription(t.bed.ctx(), made?.id as string)).expires_at).toBe(inDays(60));
    t.bed.clock.advance(DAY);
    await settleManualPayment(admin(), paymentId, 'refund');
    expect(await getSubscription(t.bed.ctx(), made?.id as string)).toMatchObject({ status: 'active', expires_at: inDays(29) });
  });

  it('a subscription the payment made ends now; a refund never moves an expiry before now', async () => {
    const { clientId, paymentId } = await pending();
    await settleManualPayment(admin(), paymentId, 'confirm');
    t.bed.clock.advance(2 * DAY);
    await settleManualPayment(admin(), paymentId, 'refund');
    const [sub] = await subscriptionsOf(clientId);
    expect(sub?.expires_at?.toISOString()).toBe(now().toISOString());
    expect(sub?.status).toBe('expired');
  });
});
