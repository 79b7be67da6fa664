import { randomUUID } from 'node:crypto';
import { oversizedPost, until } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BillingServer,
  billingReads,
  checkout,
  customer,
  DAY_MS,
  desiredRevision,
  nodeWithGroup,
  paySession,
  plan,
  postWebhook,
  sessionOf,
  startBilling,
  stripeEvent,
  stripeProvider,
} from '../billing-harness.ts';

/**
 * POST /webhooks/payments/{provider} (spec 4.5, 6; issue 15 item 3) with the worker's payment
 * jobs running: Stripe events signed by the real `stripe` package; a success creates or
 * extends the subscription by the plan and moves the node's revision; forged, replayed,
 * duplicated and out-of-order events are harmless; a refund takes the bought time back.
 */
let b: BillingServer;
let provider: { id: string; webhook_url: string };
let fleet: { nodeId: string; groupId: string };
let monthly: { id: string; duration_days: number };
beforeAll(async () => {
  b = await startBilling();
  provider = await stripeProvider(b);
  fleet = await nodeWithGroup(b);
  monthly = await plan(b, {
    price: 990,
    duration_days: 30,
    traffic_limit_bytes: 50_000_000_000,
    renewal: 'month',
    access_group_ids: [fleet.groupId],
  });
  await b.startWorker();
}, 60_000);
afterAll(() => b?.stop());

const { db, paymentRow, eventCount, settled, subscriptionsOf } = billingReads(() => b);
/** A client's subscriptions with their traffic counters (a row of their own, subscription_counters). */
/** A customer with a pending Stripe checkout for `planId` (and `subscriptionId`). */
async function pendingCheckout(planId = monthly.id, subscriptionId?: string) {
  const c = await customer(b);
  const res = await checkout(b, c.token, randomUUID(), {
    plan_id: planId,
    provider_id: provider.id,
    ...(subscriptionId ? { subscription_id: subscriptionId } : {}),
  });
  expect(res.status, res.text).toBe(201);
  return { client: c, paymentId: res.body.payment_id as string, session: sessionOf(b, res.body.payment_id) };
}

/** Stripe tells us the session was paid: the signed event, posted. */
async function sendPaid(session: Record<string, any>, type = 'checkout.session.completed', id?: string) {
  const e = stripeEvent(b, type, paySession(b, session.id), id);
  const res = await postWebhook(b, provider.id, e.payload, { 'stripe-signature': e.header });
  return { ...res, event: e };
}

describe('payment webhooks: success', () => {
  it('a paid checkout creates the subscription by the plan (duration, traffic, access groups, renewal); the node gets a new revision', async () => {
    const { client, paymentId, session } = await pendingCheckout();
    const revision = await desiredRevision(b, fleet.nodeId);
    const paidAt = b.p.s.clock.now();
    const res = await sendPaid(session);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 'stored', event_id: res.event.id });
    await settled(paymentId, 'succeeded');
    const [sub] = await subscriptionsOf(client.id);
    expect(sub).toMatchObject({
      plan_id: monthly.id,
      status: 'active',
      renewal: 'month',
      traffic_limit_bytes: 50_000_000_000,
      used_bytes: 0,
    });
    expect(sub?.expires_at?.getTime()).toBe(paidAt.getTime() + 30 * DAY_MS);
    const groups = await db()
      .selectFrom('subscription_access_groups')
      .select('access_group_id')
      .where('subscription_id', '=', sub!.id)
      .execute();
    expect(groups.map((g) => g.access_group_id)).toEqual([fleet.groupId]);
    expect(await desiredRevision(b, fleet.nodeId)).toBeGreaterThan(revision);
    const pay = await paymentRow(paymentId);
    expect(pay).toMatchObject({ subscription_id: sub!.id, status: 'succeeded' });
    expect(pay.applied_at).not.toBeNull();
    await until('the receipt mail', () => b.mail.mails.some((m) => m.to === client.email && m.category === 'payment_succeeded'));
    const receipt = b.mail.mails.find((m) => m.to === client.email && m.category === 'payment_succeeded');
    expect(receipt?.text).toContain('9.90 EUR');
    expect(receipt?.text).toContain(`runs until ${sub!.expires_at!.toISOString().replace('T', ' ').slice(0, 16)} UTC`);
    const me = await b.p.s.api.get('/portal/v1/me', { token: client.token });
    expect(me.body.subscriptions.map((s: { id: string }) => s.id)).toEqual([sub!.id]);
    const audit = await db()
      .selectFrom('audit_log')
      .select(['action', 'actor_type'])
      .where('entity_id', '=', paymentId)
      .orderBy('id')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['payment.created', 'payment.succeeded']);
    expect(audit[1]?.actor_type).toBe('system');
    const admin = await b.p.s.api.get(`/api/v1/payments/${paymentId}`, { token: b.p.token });
    expect(admin.body).toMatchObject({
      status: 'succeeded',
      subscription_id: sub!.id,
      paid_at: expect.any(String),
      applied_at: expect.any(String),
    });
  });

  it('the same event again is stored once; another event with the same news applies nothing twice', async () => {
    const { client, paymentId, session } = await pendingCheckout();
    const first = await sendPaid(session);
    await settled(paymentId, 'succeeded');
    const [sub] = await subscriptionsOf(client.id);
    const events = await eventCount();
    const replay = await postWebhook(b, provider.id, first.event.payload, { 'stripe-signature': first.event.header });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ received: 'duplicate', event_id: first.event.id });
    expect(await eventCount()).toBe(events);
    const other = await sendPaid(session, 'checkout.session.async_payment_succeeded');
    expect(other.body.received).toBe('stored');
    await until('the second event processed', async () => {
      const ev = await db().selectFrom('payment_events').select('outcome').where('event_id', '=', other.event.id).executeTakeFirst();
      return ev?.outcome === 'unchanged';
    });
    const after = await subscriptionsOf(client.id);
    expect(after).toHaveLength(1);
    expect(after[0]?.expires_at?.getTime()).toBe(sub?.expires_at?.getTime());
  });

  it("one's own subscription is extended from the later of now and its expiry, its traffic starts over", async () => {
    const c0 = await customer(b);
    const expires = new Date(b.p.s.clock.now().getTime() + 10 * DAY_MS);
    const own = await b.p.post('/api/v1/subscriptions', {
      client_id: c0.id,
      access_group_ids: [],
      traffic_limit_bytes: 1000,
      expires_at: expires.toISOString(),
    });
    await db().updateTable('subscription_counters').set({ used_bytes: 1000 }).where('subscription_id', '=', own.id).execute();
    await db().updateTable('subscriptions').set({ status: 'limited' }).where('id', '=', own.id).execute();
    const res = await checkout(b, c0.token, randomUUID(), { plan_id: monthly.id, provider_id: provider.id, subscription_id: own.id });
    expect(res.status, res.text).toBe(201);
    await sendPaid(sessionOf(b, res.body.payment_id));
    await settled(res.body.payment_id, 'succeeded');
    const [sub] = await subscriptionsOf(c0.id);
    expect(sub).toMatchObject({
      id: own.id,
      status: 'active',
      used_bytes: 0,
      traffic_limit_bytes: 50_000_000_000,
      renewal: 'month',
      plan_id: monthly.id,
    });
    expect(sub?.expires_at?.getTime()).toBe(expires.getTime() + 30 * DAY_MS);
  });

  it('a success for another amount than the payment is left as it is, and audited', async () => {
    const { paymentId, session } = await pendingCheckout();
    session.amount_total = 1;
    const res = await sendPaid(session);
    expect(res.status).toBe(200);
    await until('the event processed', async () => {
      const ev = await db().selectFrom('payment_events').select('outcome').where('event_id', '=', res.event.id).executeTakeFirst();
      return ev?.outcome === 'mismatch';
    });
    expect((await paymentRow(paymentId)).status).toBe('pending');
    const audit = await db().selectFrom('audit_log').select('action').where('entity_id', '=', paymentId).execute();
    expect(audit.map((a) => a.action)).toContain('payment.mismatch');
  });
});

describe('payment webhooks: an event applies to the payment both its ids name, with the amount paid', () => {
  /** Stripe reports this session object as it is (not the stand-in's copy). */
  const report = async (object: Record<string, unknown>, type = 'checkout.session.completed') => {
    const e = stripeEvent(b, type, object);
    const res = await postWebhook(b, provider.id, e.payload, { 'stripe-signature': e.header });
    expect(res.body?.received, JSON.stringify(res.body)).toBe('stored');
    return e.id;
  };
  const outcomeOf = async (eventId: string) => {
    const read = () => db().selectFrom('payment_events').select('outcome').where('event_id', '=', eventId).executeTakeFirstOrThrow();
    await until(`event ${eventId} processed`, async () => (await read()).outcome !== null);
    return (await read()).outcome;
  };

  it("an event naming our payment and another checkout's session is not applied; nor one with the session and not our id", async () => {
    const a = await pendingCheckout();
    const other = await pendingCheckout();
    const crossed = await report({ ...paySession(b, other.session.id), metadata: { payment_id: a.paymentId } });
    expect(await outcomeOf(crossed)).toBe('ids-mismatch');
    const anonymous = await report({ ...paySession(b, a.session.id), metadata: {}, client_reference_id: null });
    expect(await outcomeOf(anonymous)).toBe('ids-mismatch');
    expect((await paymentRow(a.paymentId)).status).toBe('pending');
    expect((await paymentRow(other.paymentId)).status).toBe('pending');
    expect(await subscriptionsOf(a.client.id)).toEqual([]);
    const audit = await db()
      .selectFrom('audit_log')
      .select('details')
      .where('entity_id', '=', a.paymentId)
      .where('action', '=', 'payment.mismatch')
      .execute();
    expect(audit.map((e) => (e.details as { reason: string }).reason)).toEqual(['ids', 'ids']);
  });

  it('a success without the amount or the currency is not applied (outcome incomplete); with them it is', async () => {
    const { client, paymentId, session } = await pendingCheckout();
    const paid = paySession(b, session.id);
    expect(await outcomeOf(await report({ ...paid, amount_total: null }))).toBe('incomplete');
    expect(await outcomeOf(await report({ ...paid, currency: null }, 'checkout.session.async_payment_succeeded'))).toBe('incomplete');
    expect((await paymentRow(paymentId)).status).toBe('pending');
    expect(await subscriptionsOf(client.id)).toEqual([]);
    await sendPaid(paid);
    await settled(paymentId, 'succeeded');
  });
});

describe('payment webhooks: failure', () => {
  it('an asynchronous payment that failed ends failed, audited with its source; no subscription is made', async () => {
    const { client, paymentId, session } = await pendingCheckout();
    Object.assign(session, { status: 'complete', payment_status: 'unpaid' });
    const e = stripeEvent(b, 'checkout.session.async_payment_failed', session);
    expect((await postWebhook(b, provider.id, e.payload, { 'stripe-signature': e.header })).status).toBe(200);
    await settled(paymentId, 'failed');
    expect(await subscriptionsOf(client.id)).toEqual([]);
    const audit = await db()
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('entity_id', '=', paymentId)
      .where('action', '=', 'payment.failed')
      .executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({ source: 'webhook', status: { from: 'pending', to: 'failed' } });
    expect((await paymentRow(paymentId)).status_reason).toBe('failed at the provider');
  });
});

describe('payment webhooks: forged and broken', () => {
  it('a bad signature, another secret, a stale timestamp or no signature: 400 problem and nothing stored', async () => {
    const { paymentId, session } = await pendingCheckout();
    const good = stripeEvent(b, 'checkout.session.completed', paySession(b, session.id));
    const before = await eventCount();
    const tampered = good.payload.replace('"paid"', '"paid" ');
    const cases: Array<[string, Record<string, string>]> = [
      [tampered, { 'stripe-signature': good.header }],
      [good.payload, { 'stripe-signature': good.header.replace(/v1=[0-9a-f]+/, `v1=${'0'.repeat(64)}`) }],
      [good.payload, {}],
      [good.payload, { 'stripe-signature': 'garbage' }],
    ];
    for (const [payload, headers] of cases) {
      const res = await postWebhook(b, provider.id, payload, headers);
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    }
    b.p.s.clock.advance(10 * 60_000);
    const stale = await postWebhook(b, provider.id, good.payload, { 'stripe-signature': good.header });
    expect(stale.status).toBe(400);
    expect(await eventCount()).toBe(before);
    expect((await paymentRow(paymentId)).status).toBe('pending');
  });

  it('a Stripe-Signature dated 10 minutes ahead of our clock or 10 minutes back is 400 and stores nothing; 4 minutes either way is accepted', async () => {
    const { paymentId, session } = await pendingCheckout();
    const paid = paySession(b, session.id);
    const before = await eventCount();
    for (const [skew, reason] of [
      [600, 'future'],
      [-600, 'stale'],
      [301, 'future'],
    ] as const) {
      const e = stripeEvent(b, 'checkout.session.completed', paid, undefined, skew);
      const res = await postWebhook(b, provider.id, e.payload, { 'stripe-signature': e.header });
      expect(res.status, `${skew} s`).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.body.errors.webhook).toBe(reason);
    }
    expect(await eventCount()).toBe(before);
    expect((await paymentRow(paymentId)).status).toBe('pending');
    const back = stripeEvent(b, 'checkout.session.completed', paid, undefined, -240);
    expect((await postWebhook(b, provider.id, back.payload, { 'stripe-signature': back.header })).body.received).toBe('stored');
    const ahead = stripeEvent(b, 'checkout.session.async_payment_succeeded', paid, undefined, 240);
    expect((await postWebhook(b, provider.id, ahead.payload, { 'stripe-signature': ahead.header })).body.received).toBe('stored');
    await settled(paymentId, 'succeeded');
  });

  it('an unknown or disabled provider is 404; a body over the limit is 413; nothing stored', async () => {
    const before = await eventCount();
    expect((await postWebhook(b, 'ppr_nothere', '{}', {})).status).toBe(404);
    const off = await b.p.post('/api/v1/payment-providers', {
      kind: 'stripe',
      name: 'Off',
      config: { secret_key: 'sk_test_off000000', webhook_secret: 'whsec_off000000' },
    });
    expect((await postWebhook(b, off.id, '{}', {})).status).toBe(404);
    const big = await oversizedPost(`${b.p.s.url}/webhooks/payments/${provider.id}`, JSON.stringify({ pad: 'x'.repeat(300 * 1024) }));
    expect(big.status).toBe(413);
    expect(await eventCount()).toBe(before);
  });

  it('an event that is not about a checkout is answered 200 and not stored', async () => {
    const before = await eventCount();
    const e = stripeEvent(b, 'customer.created', { id: 'cus_1', object: 'customer' });
    const res = await postWebhook(b, provider.id, e.payload, { 'stripe-signature': e.header });
    expect(res.status).toBe(200);
    expect(res.body.received).toBe('ignored');
    expect(await eventCount()).toBe(before);
  });
});

describe('payment webhooks: refunds and order', () => {
  const refundEvent = (session: Record<string, any>) =>
    stripeEvent(b, 'charge.refunded', {
      id: `ch_${session.id}`,
      object: 'charge',
      payment_intent: session.payment_intent,
      refunded: true,
      amount_refunded: session.amount_total,
    });

  it('a refund after the success takes the bought time back: a subscription the payment created expires now', async () => {
    const { client, paymentId, session } = await pendingCheckout();
    await sendPaid(session);
    await settled(paymentId, 'succeeded');
    const revision = await desiredRevision(b, fleet.nodeId);
    const refund = refundEvent(session);
    expect((await postWebhook(b, provider.id, refund.payload, { 'stripe-signature': refund.header })).status).toBe(200);
    await settled(paymentId, 'refunded');
    const [sub] = await subscriptionsOf(client.id);
    expect(sub?.status).toBe('expired');
    expect(sub?.expires_at?.getTime()).toBe(b.p.s.clock.now().getTime());
    expect(await desiredRevision(b, fleet.nodeId)).toBeGreaterThan(revision);
    const pay = await paymentRow(paymentId);
    expect(pay.reverted_at).not.toBeNull();
    const audit = await db().selectFrom('audit_log').select('action').where('entity_id', '=', sub!.id).execute();
    expect(audit.map((a) => a.action)).toContain('subscription.refund-reverted');
    await until('the refund mail', () => b.mail.mails.some((m) => m.to === client.email && m.category === 'payment_refunded'));
  });

  it('out of order: a refund heard before the success ends refunded, and the success after it applies nothing', async () => {
    const { client, paymentId, session } = await pendingCheckout();
    paySession(b, session.id);
    const refund = refundEvent(session);
    expect((await postWebhook(b, provider.id, refund.payload, { 'stripe-signature': refund.header })).status).toBe(200);
    await settled(paymentId, 'refunded');
    const late = await sendPaid(session);
    expect(late.body.received).toBe('stored');
    await until('the late success processed', async () => {
      const ev = await db().selectFrom('payment_events').select('outcome').where('event_id', '=', late.event.id).executeTakeFirst();
      return ev?.outcome === 'unchanged';
    });
    expect((await paymentRow(paymentId)).status).toBe('refunded');
    expect(await subscriptionsOf(client.id)).toEqual([]);
  });

  it('out of order: an expiry after the success is stale; the payment stays succeeded', async () => {
    const { client, paymentId, session } = await pendingCheckout();
    await sendPaid(session);
    await settled(paymentId, 'succeeded');
    const expired = stripeEvent(b, 'checkout.session.expired', { ...session, status: 'expired' });
    await postWebhook(b, provider.id, expired.payload, { 'stripe-signature': expired.header });
    await until('the expiry processed', async () => {
      const ev = await db().selectFrom('payment_events').select('outcome').where('event_id', '=', expired.id).executeTakeFirst();
      return ev?.outcome === 'unchanged';
    });
    expect((await paymentRow(paymentId)).status).toBe('succeeded');
    expect((await subscriptionsOf(client.id))[0]?.status).toBe('active');
  });
});
