import { createHash, createHmac } from 'node:crypto';
import { CRYPTOBOT_API, CRYPTOBOT_STATUS_TABLE, cryptobotAdapter, paymentProviderAdapter } from '@svc/providers';
import { testOutbound } from '@svc/testkit';
import { downAddress, type StandIn, startStandIn } from '@svc/testkit/provider-stand-in';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The CryptoBot (Crypto Pay) adapter against a local stand-in of its API. Signatures are
// computed here independently from the adapter: hex HMAC-SHA256 of the raw body, keyed with
// SHA-256 of the API token.
const TOKEN = '12345:AAzStandInCryptoPayToken000000000';
const OTHER_TOKEN = '12345:AAzAnotherCryptoPayToken00000000';

let api: StandIn;
beforeAll(async () => {
  api = await startStandIn('/api');
});
afterAll(() => api.close());

const adapter = (baseUrl = api.base, timeoutMs?: number) =>
  cryptobotAdapter({ api_token: TOKEN, network: 'testnet' }, { outbound: testOutbound(), baseUrl, timeoutMs });

const sign = (token: string, body: string) => createHmac('sha256', createHash('sha256').update(token).digest()).update(body).digest('hex');

const invoice = (over: Record<string, unknown> = {}) => ({
  invoice_id: 528890,
  hash: 'IVabc',
  currency_type: 'fiat',
  fiat: 'USD',
  amount: '4.99',
  status: 'active',
  payload: 'pay_1',
  bot_invoice_url: 'https://t.me/CryptoTestnetBot?start=IVabc',
  created_at: '2026-11-24T12:00:00.000Z',
  expiration_date: '2026-11-24T13:00:00.000Z',
  ...over,
});

const update = (over: Record<string, unknown> = {}) => ({
  update_id: 9001,
  update_type: 'invoice_paid',
  request_date: '2026-11-24T12:10:00.000Z',
  payload: invoice({ status: 'paid', paid_at: '2026-11-24T12:09:59.000Z' }),
  ...over,
});

const webhook = (body: unknown, token = TOKEN, raw = JSON.stringify(body)) => ({
  rawBody: Buffer.from(raw),
  headers: { 'crypto-pay-api-signature': sign(token, raw), 'content-type': 'application/json' },
  sourceIp: '198.51.100.7',
});

const checkout = {
  payment_id: 'pay_1',
  amount: 499,
  currency: 'USD',
  description: 'Plan Basic, 30 days',
  success_url: 'https://portal.example/paid',
  cancel_url: 'https://portal.example/cancel',
  idempotency_key: 'key-1',
};

describe('CryptoBot checkout', () => {
  it('createInvoice: a fiat invoice for the decimal amount, our payment id as payload, the token header', async () => {
    api.handle(() => ({ status: 200, json: { ok: true, result: invoice() } }));
    const result = await adapter().createCheckout(checkout);
    expect(result).toEqual({
      provider_payment_id: '528890',
      checkout_url: 'https://t.me/CryptoTestnetBot?start=IVabc',
      expires_at: '2026-11-24T13:00:00.000Z',
    });
    const req = api.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/api/createInvoice');
    expect(req.headers['crypto-pay-api-token']).toBe(TOKEN);
    expect(JSON.parse(req.body)).toEqual({
      currency_type: 'fiat',
      fiat: 'USD',
      amount: '4.99',
      description: 'Plan Basic, 30 days',
      payload: 'pay_1',
      expires_in: 3600,
      paid_btn_name: 'callback',
      paid_btn_url: 'https://portal.example/paid',
    });
  });

  it("the amount is written with the currency's own decimals (JPY none, KWD three)", async () => {
    api.handle(() => ({ status: 200, json: { ok: true, result: invoice() } }));
    await adapter().createCheckout({ ...checkout, amount: 500, currency: 'JPY' });
    expect(JSON.parse(api.requests.at(-1)!.body)).toMatchObject({ fiat: 'JPY', amount: '500' });
    await adapter().createCheckout({ ...checkout, amount: 1234, currency: 'KWD' });
    expect(JSON.parse(api.requests.at(-1)!.body)).toMatchObject({ amount: '1.234' });
  });

  it('an error of the API (ok false) is an unavailable problem naming its error, not the token', async () => {
    api.handle(() => ({ status: 401, json: { ok: false, error: { code: 401, name: 'UNAUTHORIZED' } } }));
    const err = await adapter()
      .createCheckout(checkout)
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'DomainError', type: 'unavailable' });
    expect(err.message).toContain('UNAUTHORIZED');
    expect(err.message).not.toContain(TOKEN);
  });

  it('the registry builds the testnet adapter from the stored settings', () => {
    const port = paymentProviderAdapter('cryptobot', { network: 'testnet' }, { api_token: TOKEN });
    expect(port.kind).toBe('cryptobot');
    expect(CRYPTOBOT_API.testnet).toBe('https://testnet-pay.crypt.bot/api');
    expect(() => paymentProviderAdapter('cryptobot', {}, {})).toThrow(/api_token is not set/);
  });
});

describe('CryptoBot webhooks', () => {
  it('a validly signed invoice_paid update is a succeeded event mapped back to our payment', async () => {
    expect(await adapter().verifyWebhook(webhook(update()))).toEqual({
      type: 'payment',
      event_id: '9001',
      provider_payment_id: '528890',
      payment_id: 'pay_1',
      status: 'succeeded',
      amount: 499,
      currency: 'USD',
      occurred_at: '2026-11-24T12:09:59.000Z',
    });
  });

  it.each([
    ['signed with another token', () => webhook(update(), OTHER_TOKEN), 'bad-signature'],
    ['a forged signature', () => ({ ...webhook(update()), headers: { 'crypto-pay-api-signature': 'f'.repeat(64) } }), 'bad-signature'],
    ['a signature that is not hex', () => ({ ...webhook(update()), headers: { 'crypto-pay-api-signature': 'zz' } }), 'bad-signature'],
    [
      'a tampered body',
      () => ({ ...webhook(update()), rawBody: Buffer.from(JSON.stringify(update({ update_id: 9002 }))) }),
      'bad-signature',
    ],
    ['no signature header', () => ({ ...webhook(update()), headers: {} }), 'missing-signature'],
    ['signed but not JSON', () => webhook(null, TOKEN, 'not json'), 'malformed'],
    ['signed but without update_id', () => webhook({ update_type: 'invoice_paid' }), 'malformed'],
    ['signed but without an invoice', () => webhook(update({ payload: 'x' })), 'malformed'],
  ])('%s is refused as a validation problem', async (_name, make, reason) => {
    const err = await adapter()
      .verifyWebhook(make())
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'DomainError', type: 'validation', errors: { webhook: reason } });
    expect(err.message).not.toContain(TOKEN);
  });

  it('the signature header is found whatever its case', async () => {
    const w = webhook(update());
    const headers = { 'Crypto-Pay-API-Signature': w.headers['crypto-pay-api-signature'] };
    await expect(adapter().verifyWebhook({ ...w, headers })).resolves.toMatchObject({ type: 'payment' });
    await expect(adapter().verifyWebhook({ ...w, headers: new Headers(headers) })).resolves.toMatchObject({ type: 'payment' });
  });

  it('another update type is verified and ignored', async () => {
    expect(await adapter().verifyWebhook(webhook(update({ update_type: 'something_new' })))).toMatchObject({
      type: 'ignored',
      event_id: '9001',
    });
  });
});

describe('CryptoBot statuses and re-read', () => {
  it('maps active, paid, expired; anything else is unknown', () => {
    expect(CRYPTOBOT_STATUS_TABLE).toEqual({ active: 'pending', paid: 'succeeded', expired: 'expired' });
    const a = adapter();
    expect(a.mapStatus('paid')).toBe('succeeded');
    expect(a.mapStatus('toString')).toBeNull();
  });

  it('fetchPayment reads the invoice through getInvoices', async () => {
    api.handle(() => ({ status: 200, json: { ok: true, result: { items: [invoice({ status: 'expired' })] } } }));
    expect(await adapter().fetchPayment('528890')).toMatchObject({
      provider_payment_id: '528890',
      payment_id: 'pay_1',
      status: 'expired',
      amount: 499,
      currency: 'USD',
    });
    const req = api.requests.at(-1)!;
    expect(req.method).toBe('GET');
    expect(req.path).toBe('/api/getInvoices?invoice_ids=528890');
    expect(req.headers['crypto-pay-api-token']).toBe(TOKEN);
  });

  it('an invoice the API does not list is not found; an id that is not an invoice id is not sent', async () => {
    api.handle(() => ({ status: 200, json: { ok: true, result: { items: [] } } }));
    await expect(adapter().fetchPayment('1')).rejects.toMatchObject({ type: 'not-found' });
    const before = api.requests.length;
    await expect(adapter().fetchPayment('1,2')).rejects.toMatchObject({ type: 'not-found' });
    expect(api.requests.length).toBe(before);
  });

  it('API down: unavailable; API silent: timeout; neither names the token', async () => {
    const down = await cryptobotAdapter({ api_token: TOKEN }, { outbound: testOutbound(), baseUrl: await downAddress('/api') })
      .fetchPayment('1')
      .catch((e) => e);
    expect(down).toMatchObject({ name: 'DomainError', type: 'unavailable' });
    api.handle(() => 'silent');
    const silent = await adapter(api.base, 300)
      .createCheckout(checkout)
      .catch((e) => e);
    expect(silent).toMatchObject({ name: 'DomainError', type: 'timeout' });
    for (const e of [down, silent]) expect(e.message).not.toContain(TOKEN);
  });
});
