import { createHash, createHmac, randomUUID } from 'node:crypto';
import { until } from '@svc/testkit';
import { type StandIn, startStandIn } from '@svc/testkit/provider-stand-in';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BillingServer,
  billingReads,
  checkout,
  customer,
  plan,
  postWebhook,
  startBilling,
  stripeProvider,
} from '../billing-harness.ts';

/**
 * The other providers through the same ingress (issue 15 items 1, 3): CryptoBot updates signed
 * with HMAC-SHA256 keyed by SHA-256 of the token, YooKassa's unsigned notifications trusted by
 * a re-read and the sender's address; and whatever arrives at the ingress, from anyone, never
 * answers 5xx and stores nothing.
 */
const CRYPTO_TOKEN = '4242:AAIngressCryptoPayToken000000000';
const YK_SHOP = '501234';
const YK_KEY = 'test_IngressYooKassaSecretKey0000000';

let b: BillingServer;
let crypto: StandIn;
let yk: StandIn;
/** YooKassa payments as its stand-in keeps them. */
const ykPayments = new Map<string, Record<string, any>>();
let cryptoProvider: { id: string };
let ykProvider: { id: string };
let ykElsewhere: { id: string };
let stripe: { id: string };
let rub: { id: string };
let usd: { id: string };

beforeAll(async () => {
  crypto = await startStandIn('/api');
  yk = await startStandIn('/v3');
  let invoice = 1000;
  crypto.handle((req) => {
    if (req.path !== '/api/createInvoice') return { status: 404, json: { ok: false } };
    const body = JSON.parse(req.body);
    const id = ++invoice;
    return {
      status: 200,
      json: {
        ok: true,
        result: {
          invoice_id: id,
          hash: `IV${id}`,
          currency_type: 'fiat',
          fiat: body.fiat,
          amount: body.amount,
          status: 'active',
          payload: body.payload,
          bot_invoice_url: `https://t.me/CryptoTestnetBot?start=IV${id}`,
          created_at: new Date().toISOString(),
        },
      },
    };
  });
  yk.handle((req) => {
    if (req.method === 'POST' && req.path === '/v3/payments') {
      const body = JSON.parse(req.body);
      const id = randomUUID();
      const p = {
        id,
        status: 'pending',
        paid: false,
        amount: body.amount,
        metadata: body.metadata,
        confirmation: { type: 'redirect', confirmation_url: `https://yoomoney.example/checkout?orderId=${id}` },
        created_at: new Date().toISOString(),
        test: true,
      };
      ykPayments.set(id, p);
      return { status: 200, json: p };
    }
    const one = /^\/v3\/payments\/([0-9a-f-]+)$/.exec(req.path);
    const p = one ? ykPayments.get(one[1] as string) : undefined;
    return p ? { status: 200, json: p } : { status: 404, json: { type: 'error', code: 'not_found' } };
  });
  b = await startBilling({ SVC_BILLING_CRYPTOBOT_API_URL: crypto.base, SVC_BILLING_YOOKASSA_API_URL: yk.base });
  cryptoProvider = await b.p.post('/api/v1/payment-providers', {
    kind: 'cryptobot',
    name: 'Crypto',
    enabled: true,
    config: { api_token: CRYPTO_TOKEN, network: 'testnet' },
  });
  const ykConfig = { shop_id: YK_SHOP, secret_key: YK_KEY };
  ykProvider = await b.p.post('/api/v1/payment-providers', {
    kind: 'yookassa',
    name: 'YooKassa',
    enabled: true,
    config: { ...ykConfig, allowed_source_cidrs: '127.0.0.1/32, ::1/128' },
  });
  ykElsewhere = await b.p.post('/api/v1/payment-providers', {
    kind: 'yookassa',
    name: 'YooKassa (default sources)',
    enabled: true,
    config: ykConfig,
  });
  stripe = await stripeProvider(b);
  rub = await plan(b, { price: 29900, currency: 'RUB' });
  usd = await plan(b, { price: 499, currency: 'USD' });
  await b.startWorker();
}, 60_000);
afterAll(async () => {
  await b?.stop();
  await crypto?.close();
  await yk?.close();
});

const { db, paymentRow, eventCount } = billingReads(() => b);
const cryptoSign = (token: string, body: string) =>
  createHmac('sha256', createHash('sha256').update(token).digest()).update(body).digest('hex');

async function buy(planId: string, providerId: string) {
  const c = await customer(b);
  const res = await checkout(b, c.token, randomUUID(), { plan_id: planId, provider_id: providerId });
  expect(res.status, res.text).toBe(201);
  return { client: c, payment: await paymentRow(res.body.payment_id) };
}

describe('CryptoBot through the ingress', () => {
  it('an invoice_paid update signed with the token succeeds the payment; one signed with another token is 400 and stored nowhere', async () => {
    const { client, payment } = await buy(usd.id, cryptoProvider.id);
    const update = JSON.stringify({
      update_id: Number(payment.provider_payment_id) * 10,
      update_type: 'invoice_paid',
      request_date: new Date().toISOString(),
      payload: {
        invoice_id: Number(payment.provider_payment_id),
        status: 'paid',
        currency_type: 'fiat',
        fiat: 'USD',
        amount: '4.99',
        payload: payment.id,
        paid_at: new Date().toISOString(),
      },
    });
    const before = await eventCount();
    const forged = await postWebhook(b, cryptoProvider.id, update, {
      'crypto-pay-api-signature': cryptoSign('4242:AAAnotherToken00000000000000000', update),
    });
    expect(forged.status).toBe(400);
    expect(await eventCount()).toBe(before);
    const res = await postWebhook(b, cryptoProvider.id, update, { 'crypto-pay-api-signature': cryptoSign(CRYPTO_TOKEN, update) });
    expect(res.status).toBe(200);
    expect(res.body.received).toBe('stored');
    await until('the crypto payment succeeded', async () => (await paymentRow(payment.id)).status === 'succeeded');
    expect(await db().selectFrom('subscriptions').select('id').where('client_id', '=', client.id).execute()).toHaveLength(1);
  });
});

/** The outcome the worker gave a stored event, once it is processed. */
async function outcomeOf(providerId: string, eventId: string) {
  const read = () =>
    db()
      .selectFrom('payment_events')
      .select('outcome')
      .where('provider_id', '=', providerId)
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
  await until(`event ${eventId} processed`, async () => (await read()).outcome !== null);
  return (await read()).outcome;
}

describe('CryptoBot: an update applies to the payment both its ids name, with the amount paid', () => {
  const paidUpdate = (updateId: number, invoice: Record<string, unknown>) => {
    const body = JSON.stringify({
      update_id: updateId,
      update_type: 'invoice_paid',
      request_date: new Date().toISOString(),
      payload: invoice,
    });
    return postWebhook(b, cryptoProvider.id, body, { 'crypto-pay-api-signature': cryptoSign(CRYPTO_TOKEN, body) });
  };

  it("an invoice_paid naming our payment with another invoice's id, or paid in crypto (no fiat amount), is not applied", async () => {
    const { payment } = await buy(usd.id, cryptoProvider.id);
    const invoice = {
      invoice_id: Number(payment.provider_payment_id),
      status: 'paid',
      currency_type: 'fiat',
      fiat: 'USD',
      amount: '4.99',
      payload: payment.id,
      paid_at: new Date().toISOString(),
    };
    const base = Number(payment.provider_payment_id) * 10;
    expect((await paidUpdate(base + 1, { ...invoice, invoice_id: 999_999 })).body.received).toBe('stored');
    expect(await outcomeOf(cryptoProvider.id, String(base + 1))).toBe('ids-mismatch');
    const { fiat: _fiat, ...inCrypto } = invoice;
    expect((await paidUpdate(base + 2, { ...inCrypto, currency_type: 'crypto', asset: 'USDT' })).body.received).toBe('stored');
    expect(await outcomeOf(cryptoProvider.id, String(base + 2))).toBe('incomplete');
    expect((await paymentRow(payment.id)).status).toBe('pending');
  });
});

describe('YooKassa through the ingress', () => {
  const notify = (providerId: string, event: string, id: string) =>
    postWebhook(b, providerId, JSON.stringify({ type: 'notification', event, object: { id, status: 'succeeded', paid: true } }), {});

  it("the body is not believed: a 'succeeded' notice for a payment YooKassa still has pending changes nothing; after the real payment it succeeds", async () => {
    const { client, payment } = await buy(rub.id, ykProvider.id);
    const early = await notify(ykProvider.id, 'payment.succeeded', payment.provider_payment_id as string);
    expect(early.status).toBe(200);
    await until('the early notice processed', async () => {
      const ev = await db()
        .selectFrom('payment_events')
        .select('outcome')
        .where('provider_id', '=', ykProvider.id)
        .where('payment_id', '=', payment.id)
        .executeTakeFirst();
      return ev?.outcome === 'unchanged';
    });
    expect((await paymentRow(payment.id)).status).toBe('pending');
    Object.assign(ykPayments.get(payment.provider_payment_id as string)!, { status: 'succeeded', paid: true });
    const real = await notify(ykProvider.id, 'payment.succeeded', payment.provider_payment_id as string);
    expect(real.body.received).toBe('stored');
    await until('the yookassa payment succeeded', async () => (await paymentRow(payment.id)).status === 'succeeded');
    expect(await db().selectFrom('subscriptions').select('id').where('client_id', '=', client.id).execute()).toHaveLength(1);
  });

  it('a succeeded YooKassa payment whose metadata names another of our payments is not applied to it (ids-mismatch)', async () => {
    const { payment } = await buy(rub.id, ykProvider.id);
    const elsewhere = randomUUID();
    ykPayments.set(elsewhere, {
      ...ykPayments.get(payment.provider_payment_id as string),
      id: elsewhere,
      status: 'succeeded',
      paid: true,
    });
    const res = await notify(ykProvider.id, 'payment.succeeded', elsewhere);
    expect(res.body.received).toBe('stored');
    expect(await outcomeOf(ykProvider.id, `${elsewhere}:succeeded`)).toBe('ids-mismatch');
    expect((await paymentRow(payment.id)).status).toBe('pending');
  });

  it('a notification from an address outside the allow-list is 400 and stored nowhere, whatever it says', async () => {
    const { payment } = await buy(rub.id, ykElsewhere.id);
    Object.assign(ykPayments.get(payment.provider_payment_id as string)!, { status: 'succeeded', paid: true });
    const before = await eventCount();
    const res = await notify(ykElsewhere.id, 'payment.succeeded', payment.provider_payment_id as string);
    expect(res.status).toBe(400);
    expect(res.body.errors.webhook).toBe('source-not-allowed');
    expect(await eventCount()).toBe(before);
    expect((await paymentRow(payment.id)).status).toBe('pending');
  });
});

describe('hostile input at the ingress', () => {
  it('random bodies, headers and provider ids, to every kind: never 5xx, never stored', async () => {
    const before = await eventCount();
    const providers = [stripe.id, cryptoProvider.id, ykProvider.id, ykElsewhere.id];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...providers, 'ppr_nothere', '%00', '..', 'x'.repeat(70)),
        fc.oneof(
          fc.string({ maxLength: 400 }),
          fc.json({ maxDepth: 3 }),
          fc.constant('{"type":"notification","event":"payment.succeeded","object":{"id":"../../x"}}'),
        ),
        fc.dictionary(
          fc.constantFrom('stripe-signature', 'crypto-pay-api-signature', 'content-type', 'x-forwarded-for'),
          fc.string({ maxLength: 120 }).filter((v) => /^[\x20-\x7e]*$/.test(v)),
        ),
        async (provider, body, headers) => {
          const res = await fetch(`${b.p.s.url}/webhooks/payments/${encodeURIComponent(provider)}`, { method: 'POST', headers, body });
          await res.arrayBuffer();
          expect(res.status, `${provider} ${body.slice(0, 80)}`).toBeLessThan(500);
        },
      ),
      { seed: 1515, numRuns: 150 },
    );
    expect(await eventCount()).toBe(before);
    expect(b.p.s.logs.filter((l) => l.level >= 50)).toEqual([]);
  });
});
