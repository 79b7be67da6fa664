import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BillingServer,
  checkout,
  customer,
  manualProvider,
  plan,
  STRIPE_SECRET_KEY,
  sessionOf,
  startBilling,
  stripeProvider,
} from '../billing-harness.ts';

/**
 * POST /portal/v1/checkout (spec 4.2, 4.6, 7.2, 8; issue 15 item 2) over real HTTP, Stripe's API
 * played by a local stand-in: the Idempotency-Key rules, the checks on the body, and what the
 * answer carries.
 */
let b: BillingServer;
let provider: { id: string };
let planA: { id: string; price: number; name: string };
let planB: { id: string };
beforeAll(async () => {
  b = await startBilling();
  provider = await stripeProvider(b);
  planA = await plan(b, { price: 1490 });
  planB = await plan(b, { price: 2990 });
}, 60_000);
afterAll(() => b?.stop());

const paymentsOf = (clientId: string) => b.p.s.deps.db.selectFrom('payments').selectAll().where('client_id', '=', clientId).execute();
const awaitingConfirmation = (paymentId: string) =>
  b.p.s.deps.db
    .selectFrom('events')
    .select('id')
    .where('type', '=', 'payment.awaiting_confirmation')
    .where('payload', '@>', JSON.stringify({ payment_id: paymentId }) as never)
    .execute();
const createCalls = () => b.stripe.requests.filter((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions').length;

describe('POST /portal/v1/checkout: Idempotency-Key', () => {
  it('checkout without Idempotency-Key is refused (400 problem) and stores nothing', async () => {
    const c = await customer(b);
    const res = await checkout(b, c.token, null, { plan_id: planA.id, provider_id: provider.id });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body.errors).toHaveProperty('Idempotency-Key');
    const blank = await checkout(b, c.token, '', { plan_id: planA.id, provider_id: provider.id });
    expect(blank.status).toBe(400);
    const spaced = await checkout(b, c.token, 'has spaces', { plan_id: planA.id, provider_id: provider.id });
    expect(spaced.status).toBe(400);
    expect(await paymentsOf(c.id)).toEqual([]);
  });

  it('the answer carries the provider checkout URL; the payment is pending with the plan price', async () => {
    const c = await customer(b);
    const before = createCalls();
    const res = await checkout(b, c.token, randomUUID(), { plan_id: planA.id, provider_id: provider.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      status: 'pending',
      plan_id: planA.id,
      provider_id: provider.id,
      subscription_id: null,
      amount: 1490,
      currency: 'EUR',
      checkout_url: expect.stringMatching(new RegExp(`^${b.stripe.base}/c/pay/cs_test_`)),
      instructions: null,
    });
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(createCalls()).toBe(before + 1);
    const sent = b.stripe.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${STRIPE_SECRET_KEY}`);
    const form = new URLSearchParams(sent.body);
    expect(form.get('metadata[payment_id]')).toBe(res.body.payment_id);
    expect(form.get('success_url')).toBe(`https://cp.example.com/portal/payments/${res.body.payment_id}?outcome=success`);
    expect(form.get('customer_email')).toBe(c.email);
    const [row] = await paymentsOf(c.id);
    expect(row).toMatchObject({ id: res.body.payment_id, status: 'pending', amount: 1490, currency: 'EUR' });
  });

  it('same key and same body: the same answer and one payment, the provider asked once', async () => {
    const c = await customer(b);
    const key = randomUUID();
    const first = await checkout(b, c.token, key, { plan_id: planA.id, provider_id: provider.id });
    const calls = createCalls();
    const again = await checkout(b, c.token, key, { plan_id: planA.id, provider_id: provider.id });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(createCalls()).toBe(calls);
    expect(await paymentsOf(c.id)).toHaveLength(1);
  });

  it('same key and another body: 422 problem, nothing changes', async () => {
    const c = await customer(b);
    const key = randomUUID();
    const first = await checkout(b, c.token, key, { plan_id: planA.id, provider_id: provider.id });
    const before = await paymentsOf(c.id);
    const other = await checkout(b, c.token, key, { plan_id: planB.id, provider_id: provider.id });
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toBe('application/problem+json');
    expect(other.body.type).toBe('urn:svc:problem:unprocessable');
    expect(other.body.errors).toHaveProperty('Idempotency-Key');
    expect(await paymentsOf(c.id)).toEqual(before);
    expect((await checkout(b, c.token, key, { plan_id: planA.id, provider_id: provider.id })).body).toEqual(first.body);
  });

  it("a key belongs to the client that sent it: another client's same key is another checkout", async () => {
    const [c1, c2] = [await customer(b), await customer(b)];
    const key = randomUUID();
    const one = await checkout(b, c1.token, key, { plan_id: planA.id, provider_id: provider.id });
    const two = await checkout(b, c2.token, key, { plan_id: planB.id, provider_id: provider.id });
    expect(one.status).toBe(201);
    expect(two.status).toBe(201);
    expect(two.body.payment_id).not.toBe(one.body.payment_id);
    expect(two.headers.get('idempotent-replayed')).toBeNull();
    expect(await paymentsOf(c1.id)).toHaveLength(1);
    expect(await paymentsOf(c2.id)).toHaveLength(1);
  });

  it('concurrent checkouts with one key: one payment, one provider checkout, every answer the same', async () => {
    const c = await customer(b);
    const key = randomUUID();
    const calls = createCalls();
    // Stripe answers slowly, so the racers arrive while the first is still creating the checkout.
    b.stripeDelayMs = 300;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => checkout(b, c.token, key, { plan_id: planA.id, provider_id: provider.id })),
    );
    for (const a of answers) expect(a.status, a.text).toBe(201);
    expect(new Set(answers.map((a) => a.body.payment_id)).size).toBe(1);
    expect(new Set(answers.map((a) => a.body.checkout_url)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(await paymentsOf(c.id)).toHaveLength(1);
    expect(createCalls()).toBe(calls + 1);
    b.stripeDelayMs = 0;
  });
});

describe('POST /portal/v1/checkout: what may be bought', () => {
  it("a subscription_id must be the client's own: another client's is 400 like a missing one, nothing stored", async () => {
    const [c1, c2] = [await customer(b), await customer(b)];
    const theirs = await b.p.post('/api/v1/subscriptions', { client_id: c2.id, access_group_ids: [] });
    const res = await checkout(b, c1.token, randomUUID(), { plan_id: planA.id, provider_id: provider.id, subscription_id: theirs.id });
    const missing = await checkout(b, c1.token, randomUUID(), {
      plan_id: planA.id,
      provider_id: provider.id,
      subscription_id: 'sub_nothere',
    });
    expect(res.status).toBe(400);
    expect(missing.status).toBe(400);
    expect(res.body.errors).toEqual(missing.body.errors);
    expect(await paymentsOf(c1.id)).toEqual([]);
    const own = await b.p.post('/api/v1/subscriptions', { client_id: c1.id, access_group_ids: [] });
    const ok = await checkout(b, c1.token, randomUUID(), { plan_id: planA.id, provider_id: provider.id, subscription_id: own.id });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.subscription_id).toBe(own.id);
  });

  it('an archived plan, a free plan, a disabled or unknown provider: 400 naming the field, nothing stored', async () => {
    const c = await customer(b);
    const archived = await plan(b, { archived: true });
    const free = await plan(b, { price: 0 });
    const off = await b.p.post('/api/v1/payment-providers', { kind: 'manual', name: 'Off', config: { instructions: 'x' } });
    for (const [body, field] of [
      [{ plan_id: archived.id, provider_id: provider.id }, 'plan_id'],
      [{ plan_id: free.id, provider_id: provider.id }, 'plan_id'],
      [{ plan_id: 'pln_nothere', provider_id: provider.id }, 'plan_id'],
      [{ plan_id: planA.id, provider_id: off.id }, 'provider_id'],
      [{ plan_id: planA.id, provider_id: 'ppr_nothere' }, 'provider_id'],
    ] as const) {
      const res = await checkout(b, c.token, randomUUID(), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
    const extra = await checkout(b, c.token, randomUUID(), { plan_id: planA.id, provider_id: provider.id, amount: 1 });
    expect(extra.status).toBe(400);
    expect(await paymentsOf(c.id)).toEqual([]);
  });

  it('a manual provider answers its instructions instead of a URL, and its deadline (billing.manual_max_days) in expires_at', async () => {
    const c = await customer(b);
    const manual = await manualProvider(b);
    const res = await checkout(b, c.token, randomUUID(), { plan_id: planA.id, provider_id: manual.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'pending', checkout_url: null, instructions: 'IBAN DE00 0000; reference: your email' });
    const days = b.p.s.config.billing.manual_max_days;
    expect(res.body.expires_at).toBe(new Date(new Date(res.body.created_at).getTime() + days * 86_400_000).toISOString());
    expect(await awaitingConfirmation(res.body.payment_id)).toHaveLength(1);
  });

  it('a checkout through a provider that reports on its payments (Stripe) raises no payment.awaiting_confirmation', async () => {
    const c = await customer(b);
    const res = await checkout(b, c.token, randomUUID(), { plan_id: planA.id, provider_id: provider.id });
    expect(res.status, res.text).toBe(201);
    expect(await awaitingConfirmation(res.body.payment_id)).toEqual([]);
    // Its expires_at is the one Stripe named for the session.
    expect(res.body.expires_at).toBe(new Date(sessionOf(b, res.body.payment_id).expires_at * 1000).toISOString());
  });

  it('the provider down: 503 and no checkout; the same key later gets one, for the same payment', async () => {
    const c = await customer(b);
    const key = randomUUID();
    const body = { plan_id: planA.id, provider_id: provider.id };
    b.stripeDown = true;
    const failed = await checkout(b, c.token, key, body);
    expect(failed.status).toBe(503);
    expect(failed.headers.get('content-type')).toBe('application/problem+json');
    const [row] = await paymentsOf(c.id);
    expect(row).toMatchObject({ status: 'pending', provider_payment_id: null, checkout_url: null });
    b.stripeDown = false;
    const retried = await checkout(b, c.token, key, body);
    expect(retried.status, retried.text).toBe(201);
    expect(retried.body.payment_id).toBe(row?.id);
    expect(retried.body.checkout_url).toMatch(new RegExp(`^${b.stripe.base}/c/pay/cs_test_`));
    expect(await paymentsOf(c.id)).toHaveLength(1);
  });

  it("Stripe answering with another payment's session: a 502 problem, nothing stored; the same key later gets this payment's own", async () => {
    const other = await customer(b);
    const taken = await checkout(b, other.token, randomUUID(), { plan_id: planA.id, provider_id: provider.id });
    expect(taken.status, taken.text).toBe(201);
    const c = await customer(b);
    const key = randomUUID();
    const body = { plan_id: planA.id, provider_id: provider.id };
    b.stripeAnswersWith = sessionOf(b, taken.body.payment_id).id;
    const failed = await checkout(b, c.token, key, body).finally(() => {
      b.stripeAnswersWith = null;
    });
    expect(failed.status).toBe(502);
    expect(failed.headers.get('content-type')).toBe('application/problem+json');
    expect(failed.body).toMatchObject({ type: 'urn:svc:problem:bad-gateway', status: 502 });
    expect(failed.body.detail).toContain('another payment');
    const [row] = await paymentsOf(c.id);
    expect(row).toMatchObject({ status: 'pending', provider_payment_id: null, checkout_url: null, checkout_started_at: null });
    const [theirs] = await paymentsOf(other.id);
    expect(theirs?.checkout_url).toBe(taken.body.checkout_url);
    const retried = await checkout(b, c.token, key, body);
    expect(retried.status, retried.text).toBe(201);
    expect(retried.body.payment_id).toBe(row?.id);
    expect(retried.body.checkout_url).not.toBe(taken.body.checkout_url);
    expect(await paymentsOf(c.id)).toHaveLength(1);
  });

  it('a client token is needed: none is 401, an admin token is refused before any business logic', async () => {
    const none = await b.p.s.api.post(
      '/portal/v1/checkout',
      { plan_id: planA.id, provider_id: provider.id },
      { headers: { 'idempotency-key': 'k' } },
    );
    expect(none.status).toBe(401);
    const admin = await b.p.s.api.post(
      '/portal/v1/checkout',
      { plan_id: planA.id, provider_id: provider.id },
      { token: b.p.token, headers: { 'idempotency-key': 'k' } },
    );
    expect([401, 403]).toContain(admin.status);
    expect(await b.p.s.deps.db.selectFrom('payments').select('id').where('idempotency_key', '=', 'k').execute()).toEqual([]);
  });
});

describe('GET /portal/v1/payments', () => {
  it("lists one's own payments with the checkout URL of a pending one; another client's payment reads like a missing one", async () => {
    const [c1, c2] = [await customer(b), await customer(b)];
    const mine = await checkout(b, c1.token, randomUUID(), { plan_id: planA.id, provider_id: provider.id });
    const theirs = await checkout(b, c2.token, randomUUID(), { plan_id: planB.id, provider_id: provider.id });
    const list = await b.p.s.api.get('/portal/v1/payments', { token: c1.token });
    expect(list.status).toBe(200);
    expect(list.body.items.map((p: { id: string }) => p.id)).toEqual([mine.body.payment_id]);
    expect(list.body.items[0]).toMatchObject({ status: 'pending', checkout_url: mine.body.checkout_url, paid_at: null, amount: 1490 });
    // What it was for, in words: the plan's and the payment method's names (a receipt names them).
    expect(list.body.items[0]).toMatchObject({ plan_name: planA.name, provider_name: 'Card', provider_kind: 'stripe' });
    const one = await b.p.s.api.get(`/portal/v1/payments/${mine.body.payment_id}`, { token: c1.token });
    expect(one.status).toBe(200);
    expect(one.body.payment_id).toBe(mine.body.payment_id);
    const other = await b.p.s.api.get(`/portal/v1/payments/${theirs.body.payment_id}`, { token: c1.token });
    const missing = await b.p.s.api.get('/portal/v1/payments/pay_nothere', { token: c1.token });
    expect(other.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(other.body.detail.replace(theirs.body.payment_id, 'X')).toBe(missing.body.detail.replace('pay_nothere', 'X'));
  });
});

describe('POST /portal/v1/checkout: budget', () => {
  it('new checkouts are limited per client (429 with Retry-After); replays are free and another client is not affected', async () => {
    const c = await customer(b);
    const limit = b.p.s.config.rate_limits.checkout.limit;
    const first = randomUUID();
    for (let i = 0; i < limit; i++) {
      const res = await checkout(b, c.token, i === 0 ? first : randomUUID(), { plan_id: planA.id, provider_id: provider.id });
      expect(res.status, res.text).toBe(201);
    }
    const over = await checkout(b, c.token, randomUUID(), { plan_id: planA.id, provider_id: provider.id });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await checkout(b, c.token, first, { plan_id: planA.id, provider_id: provider.id })).status).toBe(201);
    const other = await customer(b);
    expect((await checkout(b, other.token, randomUUID(), { plan_id: planA.id, provider_id: provider.id })).status).toBe(201);
    expect(await paymentsOf(c.id)).toHaveLength(limit);
  });
});
