import { YOOKASSA_SOURCE_CIDRS } from '@svc/domain';
import { paymentProviderAdapter, yookassaAdapter } from '@svc/providers';
import { testOutbound } from '@svc/testkit';
import { downAddress, type StandIn, startStandIn } from '@svc/testkit/provider-stand-in';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The YooKassa adapter against a local stand-in of its API v3. Its notifications are unsigned:
// the tests show that the body is never believed (the state is the re-read's) and that the
// sender's address is checked against the allow-list.
const SHOP = '501234';
const KEY = 'test_StandInYooKassaSecretKey000000000';
const PID = '2d7a5c3e-000f-5000-9000-1b2c3d4e5f60';
const YOOKASSA_IP = '185.71.76.5';

let api: StandIn;
beforeAll(async () => {
  api = await startStandIn('/v3');
});
afterAll(() => api.close());

const adapter = (allowed?: string) =>
  yookassaAdapter(
    { shop_id: SHOP, secret_key: KEY, allowed_source_cidrs: allowed },
    { outbound: testOutbound(), baseUrl: api.base, timeoutMs: 2000 },
  );

const payment = (over: Record<string, unknown> = {}) => ({
  id: PID,
  status: 'pending',
  paid: false,
  amount: { value: '990.00', currency: 'RUB' },
  confirmation: { type: 'redirect', confirmation_url: `https://yoomoney.example/checkout/payments/v2/contract?orderId=${PID}` },
  created_at: '2026-11-24T12:00:00.000Z',
  description: 'Plan Pro',
  metadata: { payment_id: 'pay_7' },
  recipient: { account_id: SHOP, gateway_id: '1' },
  refundable: false,
  test: true,
  ...over,
});

const notification = (event: string, object: unknown, sourceIp = YOOKASSA_IP) => ({
  rawBody: Buffer.from(JSON.stringify({ type: 'notification', event, object })),
  headers: { 'content-type': 'application/json' },
  sourceIp,
});

/** The stand-in answers every GET of the payment with this state. */
const apiSays = (over: Record<string, unknown>) =>
  api.handle((r) =>
    r.method === 'GET' && r.path === `/v3/payments/${PID}` ? { status: 200, json: payment(over) } : { status: 404, json: {} },
  );

describe('YooKassa checkout', () => {
  it('creates a payment with Basic auth, the Idempotence-Key, capture, a redirect and our payment id in metadata', async () => {
    api.handle(() => ({ status: 200, json: payment() }));
    const result = await adapter().createCheckout({
      payment_id: 'pay_7',
      amount: 99000,
      currency: 'RUB',
      description: 'Plan Pro',
      success_url: 'https://portal.example/paid',
      cancel_url: 'https://portal.example/cancel',
      idempotency_key: 'idem-77',
    });
    expect(result).toMatchObject({ provider_payment_id: PID, checkout_url: payment().confirmation.confirmation_url });
    const req = api.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/v3/payments');
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from(`${SHOP}:${KEY}`).toString('base64')}`);
    expect(req.headers['idempotence-key']).toBe('idem-77');
    expect(JSON.parse(req.body)).toEqual({
      amount: { value: '990.00', currency: 'RUB' },
      capture: true,
      confirmation: { type: 'redirect', return_url: 'https://portal.example/paid' },
      description: 'Plan Pro',
      metadata: { payment_id: 'pay_7' },
    });
  });

  it('a key longer than YooKassa takes (64) is sent as its SHA-256, still one key per checkout', async () => {
    api.handle(() => ({ status: 200, json: payment() }));
    const long = 'k'.repeat(100);
    const req = { payment_id: 'p', amount: 1, currency: 'RUB', description: 'd', success_url: 's', cancel_url: 'c', idempotency_key: long };
    await adapter().createCheckout(req);
    const first = api.requests.at(-1)!.headers['idempotence-key'];
    await adapter().createCheckout(req);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(api.requests.at(-1)!.headers['idempotence-key']).toBe(first);
  });

  it('a refusal of the API names its code, not the key', async () => {
    api.handle(() => ({ status: 401, json: { type: 'error', code: 'invalid_credentials', description: `bad ${KEY}` } }));
    const err = await adapter()
      .fetchPayment(PID)
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'DomainError', type: 'unavailable' });
    expect(err.message).toContain('invalid_credentials');
    expect(err.message).not.toContain(KEY);
    expect(err.message).not.toContain(Buffer.from(`${SHOP}:${KEY}`).toString('base64'));
  });
});

describe('YooKassa notifications: trust comes from the re-read', () => {
  it('payment.succeeded whose re-read says succeeded is a succeeded event', async () => {
    apiSays({ status: 'succeeded', paid: true, captured_at: '2026-11-24T12:05:00.000Z' });
    const got = await adapter().verifyWebhook(notification('payment.succeeded', payment({ status: 'succeeded' })));
    expect(got).toEqual({
      type: 'payment',
      event_id: `${PID}:succeeded`,
      provider_payment_id: PID,
      payment_id: 'pay_7',
      status: 'succeeded',
      amount: 99000,
      currency: 'RUB',
      occurred_at: '2026-11-24T12:05:00.000Z',
    });
    expect(api.requests.at(-1)).toMatchObject({ method: 'GET', path: `/v3/payments/${PID}` });
  });

  it('a body that says succeeded while the re-read says pending is a pending event (and does not use up the success id)', async () => {
    apiSays({ status: 'pending' });
    const forged = notification('payment.succeeded', payment({ status: 'succeeded', amount: { value: '1.00', currency: 'RUB' } }));
    const got = await adapter().verifyWebhook(forged);
    expect(got).toMatchObject({ type: 'payment', status: 'pending', event_id: `${PID}:pending`, amount: 99000 });
  });

  it('a notification naming a payment YooKassa does not know is refused', async () => {
    api.handle(() => ({ status: 404, json: { type: 'error', code: 'not_found' } }));
    await expect(adapter().verifyWebhook(notification('payment.succeeded', payment()))).rejects.toMatchObject({
      type: 'validation',
      errors: { webhook: 'unknown-payment' },
    });
  });

  it('refund.succeeded re-reads the refunded payment: fully refunded -> refunded, partly -> still succeeded', async () => {
    const refund = {
      id: '2d7a5c3f-0015-5000-a000-1111',
      payment_id: PID,
      status: 'succeeded',
      amount: { value: '990.00', currency: 'RUB' },
    };
    apiSays({ status: 'succeeded', refunded_amount: { value: '990.00', currency: 'RUB' } });
    expect(await adapter().verifyWebhook(notification('refund.succeeded', refund))).toMatchObject({
      type: 'payment',
      status: 'refunded',
      event_id: `${PID}:refunded`,
      payment_id: 'pay_7',
    });
    apiSays({ status: 'succeeded', refunded_amount: { value: '100.00', currency: 'RUB' } });
    expect(await adapter().verifyWebhook(notification('refund.succeeded', refund))).toMatchObject({ status: 'succeeded' });
  });

  it.each([
    [{ status: 'canceled', cancellation_details: { party: 'yoo_money', reason: 'expired_on_confirmation' } }, 'expired'],
    [{ status: 'canceled', cancellation_details: { party: 'merchant', reason: 'canceled_by_merchant' } }, 'canceled'],
    [{ status: 'canceled', cancellation_details: { party: 'payment_network', reason: 'insufficient_funds' } }, 'failed'],
    [{ status: 'waiting_for_capture' }, 'pending'],
  ])('payment.canceled re-read as %o -> %s', async (over, status) => {
    apiSays(over);
    expect(await adapter().verifyWebhook(notification('payment.canceled', payment(over)))).toMatchObject({ status });
  });

  it('events about other objects (payouts, deals) are ignored without a re-read', async () => {
    const before = api.requests.length;
    expect(await adapter().verifyWebhook(notification('payout.succeeded', { id: 'po-1' }))).toMatchObject({ type: 'ignored' });
    expect(api.requests.length).toBe(before);
  });
});

describe('YooKassa notifications: source address allow-list', () => {
  it.each([
    ['185.71.76.5', true],
    ['::ffff:185.71.77.31', true],
    ['77.75.156.11', true],
    ['77.75.156.12', false],
    ['2a02:5180:0:1::7', true],
    ['2a02:5181::1', false],
    ['203.0.113.9', false],
    ['not-an-address', false],
    ['', false],
  ])('with the default (published) ranges, %s allowed: %s', async (ip, allowed) => {
    apiSays({ status: 'succeeded' });
    const before = api.requests.length;
    const result = adapter()
      .verifyWebhook(notification('payment.succeeded', payment(), ip))
      .catch((e) => e);
    if (allowed) await expect(result).resolves.toMatchObject({ type: 'payment' });
    else {
      await expect(result).resolves.toMatchObject({ type: 'validation', errors: { webhook: 'source-not-allowed' } });
      expect(api.requests.length).toBe(before);
    }
  });

  it('a configured list replaces the default (v4 and v6 ranges); "any" turns the check off', async () => {
    apiSays({ status: 'succeeded' });
    const own = adapter('10.0.0.0/8, fd00::/8');
    await expect(own.verifyWebhook(notification('payment.succeeded', payment(), '10.1.2.3'))).resolves.toMatchObject({ type: 'payment' });
    await expect(own.verifyWebhook(notification('payment.succeeded', payment(), 'fd12::1'))).resolves.toMatchObject({ type: 'payment' });
    await expect(own.verifyWebhook(notification('payment.succeeded', payment(), YOOKASSA_IP))).rejects.toMatchObject({
      type: 'validation',
    });
    await expect(adapter('any').verifyWebhook(notification('payment.succeeded', payment(), '203.0.113.9'))).resolves.toMatchObject({
      type: 'payment',
    });
  });

  it('the registry passes the stored allow-list; the default is the published list', () => {
    expect(YOOKASSA_SOURCE_CIDRS).toContain('2a02:5180::/32');
    const port = paymentProviderAdapter('yookassa', { shop_id: SHOP, allowed_source_cidrs: 'any' }, { secret_key: KEY });
    expect(port.kind).toBe('yookassa');
    expect(() => paymentProviderAdapter('yookassa', {}, { secret_key: KEY })).toThrow(/shop_id is not set/);
  });
});

describe('YooKassa outbound failures', () => {
  it('API down: unavailable; API silent: timeout (also while verifying a notification); neither names the key', async () => {
    const down = await yookassaAdapter({ shop_id: SHOP, secret_key: KEY }, { outbound: testOutbound(), baseUrl: await downAddress('/v3') })
      .fetchPayment(PID)
      .catch((e) => e);
    expect(down).toMatchObject({ name: 'DomainError', type: 'unavailable' });
    api.handle(() => 'silent');
    const slow = yookassaAdapter({ shop_id: SHOP, secret_key: KEY }, { outbound: testOutbound(), baseUrl: api.base, timeoutMs: 300 });
    const silent = await slow.verifyWebhook(notification('payment.succeeded', payment())).catch((e) => e);
    expect(silent).toMatchObject({ name: 'DomainError', type: 'timeout' });
    for (const e of [down, silent]) expect(e.message).not.toContain(KEY);
  });
});
