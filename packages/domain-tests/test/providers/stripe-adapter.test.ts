import { createHmac } from 'node:crypto';
import { stripeAdapter } from '@svc/providers';
import { testOutbound } from '@svc/testkit';
import { downAddress, type StandIn, startStandIn } from '@svc/testkit/provider-stand-in';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The Stripe adapter against a local stand-in of Stripe's API, with webhook signatures made
// by the real `stripe` package (generateTestHeaderString).
const SECRET_KEY = 'sk_test_51StandInSecretKeyValue000000';
const WEBHOOK_SECRET = 'whsec_standInWebhookSecret0000000000';
const NOW = new Date('2026-11-24T12:00:00Z');
const nowSeconds = Math.floor(NOW.getTime() / 1000);

let api: StandIn;
beforeAll(async () => {
  api = await startStandIn();
});
afterAll(() => api.close());

const adapter = (baseUrl = api.base, timeoutMs?: number) =>
  stripeAdapter(
    { secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET },
    { outbound: testOutbound(), baseUrl, timeoutMs, now: () => NOW },
  );

const session = (over: Record<string, unknown> = {}) => ({
  id: 'cs_test_a1',
  object: 'checkout.session',
  status: 'open',
  payment_status: 'unpaid',
  amount_total: 4990,
  currency: 'eur',
  client_reference_id: 'pay_1',
  metadata: { payment_id: 'pay_1' },
  url: 'https://checkout.stripe.example/c/pay/cs_test_a1',
  expires_at: nowSeconds + 86400,
  ...over,
});

const checkout = {
  payment_id: 'pay_1',
  amount: 4990,
  currency: 'EUR',
  description: 'Plan Pro, 30 days',
  client_email: 'client@example.com',
  success_url: 'https://portal.example/paid',
  cancel_url: 'https://portal.example/cancel',
  idempotency_key: 'key-123',
};

function signed(event: unknown, opts: { secret?: string; timestamp?: number } = {}) {
  const payload = JSON.stringify(event);
  const header = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: opts.secret ?? WEBHOOK_SECRET,
    timestamp: opts.timestamp ?? nowSeconds,
  });
  return { rawBody: Buffer.from(payload), headers: { 'stripe-signature': header }, sourceIp: '203.0.113.5' };
}

const event = (type: string, object: unknown, id = 'evt_1') => ({
  id,
  object: 'event',
  type,
  created: nowSeconds - 5,
  data: { object },
  api_version: '2026-10-28.endive',
});

describe('Stripe checkout', () => {
  it('creates a Checkout Session with the amount, currency, our payment id and the Idempotency-Key', async () => {
    api.handle(() => ({ status: 200, json: session() }));
    const result = await adapter().createCheckout(checkout);
    expect(result).toEqual({
      provider_payment_id: 'cs_test_a1',
      checkout_url: 'https://checkout.stripe.example/c/pay/cs_test_a1',
      expires_at: new Date((nowSeconds + 86400) * 1000).toISOString(),
    });
    const req = api.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/v1/checkout/sessions');
    expect(req.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect(req.headers['idempotency-key']).toBe('key-123');
    const form = Object.fromEntries(new URLSearchParams(req.body));
    expect(form).toMatchObject({
      mode: 'payment',
      'line_items[0][quantity]': '1',
      'line_items[0][price_data][currency]': 'eur',
      'line_items[0][price_data][unit_amount]': '4990',
      'line_items[0][price_data][product_data][name]': 'Plan Pro, 30 days',
      'metadata[payment_id]': 'pay_1',
      'payment_intent_data[metadata][payment_id]': 'pay_1',
      client_reference_id: 'pay_1',
      customer_email: 'client@example.com',
      success_url: 'https://portal.example/paid',
      cancel_url: 'https://portal.example/cancel',
    });
  });

  it('Stripe refusing the key is an unavailable problem that does not repeat the key', async () => {
    api.handle(() => ({
      status: 401,
      json: { error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${SECRET_KEY}` } },
    }));
    const err = await adapter()
      .createCheckout(checkout)
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'DomainError', type: 'unavailable' });
    expect(err.message).not.toContain(SECRET_KEY);
    expect(err.message).not.toContain(SECRET_KEY.slice(0, 8));
  });

  it('an amount that is not a positive integer is refused before anything is sent', async () => {
    const before = api.requests.length;
    await expect(adapter().createCheckout({ ...checkout, amount: 0 })).rejects.toMatchObject({ type: 'validation' });
    await expect(adapter().createCheckout({ ...checkout, currency: 'eur' })).rejects.toMatchObject({ type: 'validation' });
    expect(api.requests.length).toBe(before);
  });
});

describe('Stripe webhooks', () => {
  it('a validly signed checkout.session.completed (paid) is a succeeded event mapped back to our payment', async () => {
    const got = await adapter().verifyWebhook(
      signed(event('checkout.session.completed', session({ status: 'complete', payment_status: 'paid' }))),
    );
    expect(got).toEqual({
      type: 'payment',
      event_id: 'evt_1',
      provider_payment_id: 'cs_test_a1',
      payment_id: 'pay_1',
      status: 'succeeded',
      amount: 4990,
      currency: 'EUR',
      occurred_at: new Date((nowSeconds - 5) * 1000).toISOString(),
    });
  });

  it.each([
    ['checkout.session.completed', { status: 'complete', payment_status: 'unpaid' }, 'pending'],
    ['checkout.session.async_payment_succeeded', { status: 'complete', payment_status: 'paid' }, 'succeeded'],
    ['checkout.session.async_payment_failed', { status: 'complete', payment_status: 'unpaid' }, 'failed'],
    ['checkout.session.expired', { status: 'expired' }, 'expired'],
  ])('%s (%o) -> %s', async (type, over, status) => {
    const got = await adapter().verifyWebhook(signed(event(type, session(over))));
    expect(got).toMatchObject({ type: 'payment', provider_payment_id: 'cs_test_a1', payment_id: 'pay_1', status });
  });

  it('charge.refunded (full) is a refunded event of the session that took the charge', async () => {
    api.handle((r) =>
      r.path.startsWith('/v1/checkout/sessions?')
        ? { status: 200, json: { object: 'list', data: [session({ status: 'complete', payment_status: 'paid' })], has_more: false } }
        : { status: 404, json: {} },
    );
    const charge = { id: 'ch_1', object: 'charge', refunded: true, amount_refunded: 4990, payment_intent: 'pi_1' };
    const got = await adapter().verifyWebhook(signed(event('charge.refunded', charge, 'evt_refund')));
    expect(got).toMatchObject({
      type: 'payment',
      event_id: 'evt_refund',
      status: 'refunded',
      provider_payment_id: 'cs_test_a1',
      payment_id: 'pay_1',
    });
    expect(new URLSearchParams(api.requests.at(-1)!.path.split('?')[1]).get('payment_intent')).toBe('pi_1');
  });

  it('a partial refund and other event types are verified but ignored', async () => {
    const partial = { id: 'ch_1', object: 'charge', refunded: false, amount_refunded: 100, payment_intent: 'pi_1' };
    expect(await adapter().verifyWebhook(signed(event('charge.refunded', partial)))).toMatchObject({ type: 'ignored' });
    expect(await adapter().verifyWebhook(signed(event('customer.created', { id: 'cus_1' })))).toMatchObject({
      type: 'ignored',
      event_id: 'evt_1',
    });
  });

  const paid = () => event('checkout.session.completed', session({ status: 'complete', payment_status: 'paid' }));

  it.each([
    ['signed with another secret', () => signed(paid(), { secret: 'whsec_anotherSecret000000000000000' }), 'bad-signature'],
    [
      'a forged signature',
      () => ({ ...signed(paid()), headers: { 'stripe-signature': `t=${nowSeconds},v1=${'ab'.repeat(32)}` } }),
      'bad-signature',
    ],
    ['a stale timestamp (over 300 s)', () => signed(paid(), { timestamp: nowSeconds - 301 }), 'stale'],
    ['a timestamp over 300 s ahead of our clock', () => signed(paid(), { timestamp: nowSeconds + 301 }), 'future'],
    ['a timestamp 10 minutes ahead', () => signed(paid(), { timestamp: nowSeconds + 600 }), 'future'],
    [
      // The package signs and checks "NaN.<body>" for t=abc and never bounds its age: a valid HMAC of it is still refused.
      'a timestamp that is not a number',
      () => {
        const payload = JSON.stringify(paid());
        const v1 = createHmac('sha256', WEBHOOK_SECRET).update(`NaN.${payload}`).digest('hex');
        return { rawBody: Buffer.from(payload), headers: { 'stripe-signature': `t=abc,v1=${v1}` }, sourceIp: '203.0.113.5' };
      },
      'bad-signature',
    ],
    [
      'a tampered body',
      () => ({ ...signed(paid()), rawBody: Buffer.from(JSON.stringify({ ...paid(), id: 'evt_other' })) }),
      'bad-signature',
    ],
    ['no Stripe-Signature header', () => ({ ...signed(paid()), headers: {} }), 'missing-signature'],
    ['a repeated Stripe-Signature header', () => ({ ...signed(paid()), headers: { 'stripe-signature': ['a', 'b'] } }), 'missing-signature'],
    ['a garbage header', () => ({ ...signed(paid()), headers: { 'stripe-signature': 'not a signature' } }), 'bad-signature'],
  ])('%s is refused as a validation problem, naming the reason and no secret', async (_name, make, reason) => {
    const err = await adapter()
      .verifyWebhook(make())
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'DomainError', type: 'validation', reason, errors: { webhook: reason } });
    expect(err.message).not.toContain(WEBHOOK_SECRET);
  });

  it('a timestamp within the tolerance is accepted, either way (299 s old, 299 s ahead)', async () => {
    await expect(adapter().verifyWebhook(signed(paid(), { timestamp: nowSeconds - 299 }))).resolves.toMatchObject({ type: 'payment' });
    await expect(adapter().verifyWebhook(signed(paid(), { timestamp: nowSeconds + 299 }))).resolves.toMatchObject({ type: 'payment' });
  });
});

describe('Stripe re-read', () => {
  const reread = async (over: Record<string, unknown>) => {
    api.handle(() => ({ status: 200, json: session(over) }));
    return adapter().fetchPayment('cs_test_a1');
  };

  it('reads the session with its payment intent and latest charge expanded', async () => {
    expect(await reread({ status: 'complete', payment_status: 'paid' })).toMatchObject({ status: 'succeeded', payment_id: 'pay_1' });
    const req = api.requests.at(-1)!;
    expect(req.method).toBe('GET');
    expect(decodeURIComponent(req.path)).toBe('/v1/checkout/sessions/cs_test_a1?expand[0]=payment_intent.latest_charge');
  });

  it.each([
    [{ status: 'open' }, 'pending'],
    [{ status: 'expired' }, 'expired'],
    [{ status: 'complete', payment_status: 'unpaid', payment_intent: { status: 'processing' } }, 'pending'],
    [
      {
        status: 'complete',
        payment_status: 'unpaid',
        payment_intent: { status: 'requires_payment_method', last_payment_error: { code: 'x' } },
      },
      'failed',
    ],
    [
      { status: 'complete', payment_status: 'paid', payment_intent: { status: 'succeeded', latest_charge: { refunded: true } } },
      'refunded',
    ],
    [
      { status: 'complete', payment_status: 'paid', payment_intent: { status: 'succeeded', latest_charge: { refunded: false } } },
      'succeeded',
    ],
  ])('session %o -> %s', async (over, status) => {
    expect((await reread(over)).status).toBe(status);
  });

  it('an unknown session is not found; an id that is not a session id is not sent', async () => {
    api.handle(() => ({ status: 404, json: { error: { type: 'invalid_request_error', code: 'resource_missing' } } }));
    await expect(adapter().fetchPayment('cs_test_missing')).rejects.toMatchObject({ type: 'not-found' });
    const before = api.requests.length;
    await expect(adapter().fetchPayment('../v1/customers')).rejects.toMatchObject({ type: 'not-found' });
    expect(api.requests.length).toBe(before);
  });
});

describe('Stripe outbound failures', () => {
  it('Stripe down: an unavailable problem', async () => {
    const err = await adapter(await downAddress())
      .createCheckout(checkout)
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'DomainError', type: 'unavailable' });
    expect(err.message).not.toContain(SECRET_KEY);
  });

  it('Stripe silent: a timeout problem once the time limit passes', async () => {
    api.handle(() => 'silent');
    const err = await adapter(api.base, 300)
      .fetchPayment('cs_test_a1')
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'DomainError', type: 'timeout' });
    expect(err.message).not.toContain(SECRET_KEY);
  });
});
