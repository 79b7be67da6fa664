import { randomUUID } from 'node:crypto';
import { mountAdminApi } from '@svc/admin-api';
import { JOBS } from '@svc/domain';
import { startTestServer, until } from '@svc/testkit';
import { createWorker, registerPaymentWebhooks } from '@svc/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BillingServer,
  billingReads,
  checkout,
  customer,
  DAY_MS,
  manualProvider,
  paySession,
  plan,
  postWebhook,
  sessionOf,
  startBilling,
  stripeEvent,
  stripeProvider,
} from '../billing-harness.ts';

/**
 * The life of a payment besides its webhooks (issue 15 items 4, 5): the worker re-reads a
 * pending payment that never gets a webhook until it ends; one still unpaid at its deadline
 * expires (and a success after that still buys the plan); an admin settles manual payments;
 * revenue shows in the stats overview.
 */
let b: BillingServer;
let provider: { id: string };
let monthly: { id: string };
beforeAll(async () => {
  b = await startBilling();
  provider = await stripeProvider(b);
  monthly = await plan(b, { price: 990, duration_days: 30 });
  await b.startWorker();
}, 60_000);
afterAll(() => b?.stop());

const { db, paymentRow, settled } = billingReads(() => b);

const admin = (method: 'get' | 'post', path: string) =>
  method === 'get' ? b.p.s.api.get(path, { token: b.p.token }) : b.p.s.api.post(path, undefined, { token: b.p.token });

async function pending(providerId = provider.id) {
  const c = await customer(b);
  const res = await checkout(b, c.token, randomUUID(), { plan_id: monthly.id, provider_id: providerId });
  expect(res.status, res.text).toBe(201);
  return { client: c, paymentId: res.body.payment_id as string };
}

describe('manual payments: an admin confirms, cancels, refunds', () => {
  it('confirm applies the plan; confirming again answers the payment as it is; refund takes the time back', async () => {
    const manual = await manualProvider(b);
    const { client, paymentId } = await pending(manual.id);
    const confirmed = await admin('post', `/api/v1/payments/${paymentId}/confirm`);
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body).toMatchObject({ status: 'succeeded', subscription_id: expect.any(String) });
    const sub = await db().selectFrom('subscriptions').selectAll().where('client_id', '=', client.id).executeTakeFirstOrThrow();
    expect(sub.expires_at!.getTime()).toBe(b.p.s.clock.now().getTime() + 30 * DAY_MS);
    const again = await admin('post', `/api/v1/payments/${paymentId}/confirm`);
    expect(again.status).toBe(200);
    expect(again.body.applied_at).toBe(confirmed.body.applied_at);
    expect((await admin('post', `/api/v1/payments/${paymentId}/cancel`)).status).toBe(409);
    const refunded = await admin('post', `/api/v1/payments/${paymentId}/refund`);
    expect(refunded.status).toBe(200);
    expect(refunded.body).toMatchObject({ status: 'refunded', reverted_at: expect.any(String) });
    const after = await db().selectFrom('subscriptions').selectAll().where('id', '=', sub.id).executeTakeFirstOrThrow();
    expect(after.status).toBe('expired');
    const audit = await db()
      .selectFrom('audit_log')
      .select(['action', 'actor_type'])
      .where('entity_id', '=', paymentId)
      .orderBy('id')
      .execute();
    expect(audit).toEqual([
      { action: 'payment.created', actor_type: 'client' },
      { action: 'payment.succeeded', actor_type: 'admin' },
      { action: 'payment.refunded', actor_type: 'admin' },
    ]);
  });

  it('cancel ends a pending manual payment; a provider-settled payment cannot be settled by hand (409); a viewer may not (403)', async () => {
    const manual = await manualProvider(b);
    const { paymentId } = await pending(manual.id);
    const viewer = await b.p.s.api.post(
      '/api/v1/admins',
      { email: `v-${randomUUID()}@example.com`, password: 'a long viewer password', role: 'viewer' },
      { token: b.p.token },
    );
    expect(viewer.status).toBe(201);
    const canceled = await admin('post', `/api/v1/payments/${paymentId}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body.status).toBe('canceled');
    expect((await admin('post', `/api/v1/payments/${paymentId}/refund`)).status).toBe(409);
    const card = await pending();
    const refused = await admin('post', `/api/v1/payments/${card.paymentId}/confirm`);
    expect(refused.status).toBe(409);
    expect((await paymentRow(card.paymentId)).status).toBe('pending');
    expect((await admin('post', '/api/v1/payments/pay_nothere/confirm')).status).toBe(404);
  });
});

describe('admin reads', () => {
  it("payments filter by client, status, provider and time and show the client's email; revenue per currency in the stats overview", async () => {
    b.p.s.clock.advance(1000);
    const from = b.p.s.clock.now();
    const { client, paymentId } = await pending();
    const e = stripeEvent(b, 'checkout.session.completed', paySession(b, sessionOf(b, paymentId).id));
    await postWebhook(b, provider.id, e.payload, { 'stripe-signature': e.header });
    await settled(paymentId, 'succeeded');
    const list = async (q: string) => (await admin('get', `/api/v1/payments?${q}`)).body.items.map((p: { id: string }) => p.id);
    expect(await list(`client_id=${client.id}`)).toEqual([paymentId]);
    expect(await list(`client_id=${client.id}&status=pending`)).toEqual([]);
    expect(await list(`client_id=${client.id}&provider_id=${provider.id}&status=succeeded`)).toEqual([paymentId]);
    expect(await list(`from=${encodeURIComponent(from.toISOString())}`)).toEqual([paymentId]);
    expect(await list(`to=${encodeURIComponent(from.toISOString())}&client_id=${client.id}`)).toEqual([]);
    // Whose payment it is, by email, in the list and in one payment's view.
    expect((await admin('get', `/api/v1/payments?client_id=${client.id}`)).body.items[0].client_email).toBe(client.email);
    expect((await admin('get', `/api/v1/payments/${paymentId}`)).body).toMatchObject({ client_id: client.id, client_email: client.email });
    const to = new Date(b.p.s.clock.now().getTime() + 1000);
    const stats = await admin(
      'get',
      `/api/v1/stats/overview?from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`,
    );
    expect(stats.status).toBe(200);
    expect(stats.body.revenue.by_currency).toEqual([{ currency: 'EUR', amount: 990, payments: 1, refunded_amount: 0, refunds: 0 }]);
  });
});

// Last on this server: it moves the clock by a day (the owner's token expires).
describe('the worker re-reads pending payments until they end', () => {
  it('a payment whose webhook never comes is read from the provider and succeeds; the subscription is made', async () => {
    const { client, paymentId } = await pending();
    paySession(b, sessionOf(b, paymentId).id);
    b.p.s.clock.advance(61_000);
    await settled(paymentId, 'succeeded');
    const subs = await db().selectFrom('subscriptions').selectAll().where('client_id', '=', client.id).execute();
    expect(subs).toHaveLength(1);
    const audit = await db()
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('entity_id', '=', paymentId)
      .where('action', '=', 'payment.succeeded')
      .executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({ source: 're-read' });
  });

  it('an unpaid one is read again with backoff and expires at its deadline; money after that still buys the plan', async () => {
    const { client, paymentId } = await pending();
    b.p.s.clock.advance(61_000);
    await until('the first re-read', async () => (await paymentRow(paymentId)).check_attempts >= 1);
    const first = await paymentRow(paymentId);
    expect(first.status).toBe('pending');
    expect(first.next_check_at!.getTime() - b.p.s.clock.now().getTime()).toBe(120_000);
    b.p.s.clock.advance(25 * 3600_000);
    await settled(paymentId, 'expired');
    expect((await paymentRow(paymentId)).status_reason).toMatch(/in time/);
    const session = sessionOf(b, paymentId);
    const e = stripeEvent(b, 'checkout.session.completed', paySession(b, session.id));
    expect((await postWebhook(b, provider.id, e.payload, { 'stripe-signature': e.header })).status).toBe(200);
    await settled(paymentId, 'succeeded');
    expect(await db().selectFrom('subscriptions').select('id').where('client_id', '=', client.id).execute()).toHaveLength(1);
  });
  it('a checkout the provider never created fails after an hour; its key answers that payment', async () => {
    await b.p.signIn();
    const c = await customer(b);
    const key = randomUUID();
    b.stripeDown = true;
    const res = await checkout(b, c.token, key, { plan_id: monthly.id, provider_id: provider.id });
    b.stripeDown = false;
    expect(res.status).toBe(503);
    const [row] = await db().selectFrom('payments').selectAll().where('client_id', '=', c.id).execute();
    b.p.s.clock.advance(61 * 60_000);
    await settled(row!.id, 'failed');
    expect((await paymentRow(row!.id)).status_reason).toMatch(/never created/);
    // Tokens live 15 minutes: the customer signs in again.
    await b.p.s.api.post('/portal/v1/auth/magic-link', { email: c.email });
    const pair = await b.p.s.api.post('/portal/v1/auth/callback', { token: await b.mail.tokenFor(c.email) });
    const again = await checkout(b, pair.body.access_token, key, { plan_id: monthly.id, provider_id: provider.id });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ payment_id: row!.id, status: 'failed', checkout_url: null });
  });
});

describe('a crash of the worker between storing an event and processing it', () => {
  it('the stored event is processed once after the restart, by the sweep', async () => {
    const crash = await startBilling();
    const card = await stripeProvider(crash);
    const p30 = await plan(crash);
    const c = await customer(crash);
    const res = await checkout(crash, c.token, randomUUID(), { plan_id: p30.id, provider_id: card.id });
    const paymentId = res.body.payment_id as string;
    // No worker: the webhook is verified and stored, its job waits in this process's queue.
    const e = stripeEvent(crash, 'checkout.session.completed', paySession(crash, sessionOf(crash, paymentId).id));
    const stored = await postWebhook(crash, card.id, e.payload, { 'stripe-signature': e.header });
    expect(stored.body).toEqual({ received: 'stored', event_id: e.id });
    const s1 = crash.p.s;
    const ev = await s1.deps.db.selectFrom('payment_events').selectAll().where('event_id', '=', e.id).executeTakeFirstOrThrow();
    expect(ev.processed_at).toBeNull();
    // The process goes away with its queue; the database stays.
    await crash.mail.stop();
    await s1.stop({ keepDatabase: true });
    const s2 = await startTestServer({
      database: s1.database,
      clock: s1.clock,
      installationKey: s1.config.installation_key,
      env: { SVC_BILLING_STRIPE_API_URL: crash.stripe.base },
      mount: (root) => {
        registerPaymentWebhooks(root);
        return mountAdminApi(root);
      },
    });
    const worker = createWorker(s2.runtime, { only: [JOBS.paymentsProcessEvent, JOBS.paymentsSweep], paymentsEveryMs: 50 });
    try {
      await worker.start();
      s2.clock.advance(31_000);
      await until('the event processed after the restart', async () => {
        const row = await s2.deps.db.selectFrom('payment_events').select('processed_at').where('id', '=', ev.id).executeTakeFirstOrThrow();
        return row.processed_at !== null;
      });
      const pay = await s2.deps.db.selectFrom('payments').selectAll().where('id', '=', paymentId).executeTakeFirstOrThrow();
      expect(pay.status).toBe('succeeded');
      expect(await s2.deps.db.selectFrom('subscriptions').select('id').where('client_id', '=', c.id).execute()).toHaveLength(1);
      const again = await postWebhook({ ...crash, p: { ...crash.p, s: s2 } }, card.id, e.payload, { 'stripe-signature': e.header });
      expect(again.body.received).toBe('duplicate');
      const processed = await s2.deps.db.selectFrom('payment_events').select('outcome').where('event_id', '=', e.id).execute();
      expect(processed).toEqual([{ outcome: 'applied' }]);
    } finally {
      await worker.stop();
      await s2.stop();
      await crash.stripe.close();
    }
  });
});
