import { createHash, createHmac } from 'node:crypto';
import { type PaymentProviderPort, WEBHOOK_MAX_BYTES } from '@svc/domain';
import { cryptobotAdapter, paymentProviderAdapter, stripeAdapter, yookassaAdapter } from '@svc/providers';
import { testOutbound } from '@svc/testkit';
import { type StandIn, startStandIn } from '@svc/testkit/provider-stand-in';
import fc from 'fast-check';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Whatever arrives at a webhook endpoint (random bytes, huge bodies, JSON of any shape, even
// correctly signed), an adapter answers a verified event or a typed validation refusal:
// never another error, so the ingress never answers 500.
const STRIPE_SECRET = 'whsec_hostileTestSecret00000000000';
const CRYPTO_TOKEN = '1:hostileTestToken000000000000000';

let api: StandIn;
let adapters: Record<string, PaymentProviderPort>;
beforeAll(async () => {
  api = await startStandIn();
  // Every re-read finds nothing: Stripe lists no session, YooKassa knows no payment.
  api.handle((r) =>
    r.path.startsWith('/v1/checkout/sessions')
      ? { status: 200, json: { object: 'list', data: [], has_more: false } }
      : { status: 404, json: { type: 'error', code: 'not_found' } },
  );
  adapters = {
    stripe: stripeAdapter(
      { secret_key: 'sk_test_hostile', webhook_secret: STRIPE_SECRET },
      { outbound: testOutbound(), baseUrl: api.base },
    ),
    cryptobot: cryptobotAdapter({ api_token: CRYPTO_TOKEN }, { outbound: testOutbound(), baseUrl: api.base }),
    yookassa: yookassaAdapter(
      { shop_id: '1', secret_key: 'test_hostile', allowed_source_cidrs: 'any' },
      { outbound: testOutbound(), baseUrl: `${api.base}/v3` },
    ),
  };
});
afterAll(() => api.close());

/** Resolves to the outcome; fails the property on anything but an event or a validation refusal. */
async function outcome(port: PaymentProviderPort, rawBody: Buffer, headers: Record<string, string | string[]>, sourceIp = '127.0.0.1') {
  try {
    const got = await port.verifyWebhook({ rawBody, headers, sourceIp });
    expect(['payment', 'ignored']).toContain(got.type);
    return got.type;
  } catch (err) {
    expect(err).toMatchObject({ name: 'DomainError', type: 'validation' });
    return 'refused';
  }
}

const headerArb = fc.dictionary(
  fc.constantFrom('stripe-signature', 'crypto-pay-api-signature', 'content-type', 'x-other'),
  fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 })),
);
const jsonBody = fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? 'null'));
const objectBody = fc.dictionary(fc.string(), fc.jsonValue()).map((v) => Buffer.from(JSON.stringify(v)));
const kinds = ['stripe', 'cryptobot', 'yookassa'] as const;

describe('hostile webhook input', () => {
  it.each(kinds)('%s: random bytes with random headers are refused with a validation problem', async (kind) => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), headerArb, async (bytes, headers) => {
        const got = await outcome(adapters[kind]!, Buffer.from(bytes), headers);
        if (kind !== 'yookassa') expect(got).toBe('refused');
      }),
      { numRuns: 150 },
    );
  });

  it.each(kinds)('%s: JSON of any shape, unsigned, is an event only where the kind takes unsigned bodies', async (kind) => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(jsonBody, objectBody), headerArb, async (body, headers) => {
        const got = await outcome(adapters[kind]!, body, headers);
        if (kind !== 'yookassa') expect(got).toBe('refused');
      }),
      { numRuns: 150 },
    );
  });

  it('stripe: correctly signed JSON of any shape is an event or a validation refusal', async () => {
    const eventish = fc.record(
      {
        id: fc.oneof(fc.string(), fc.integer()),
        type: fc.constantFrom('checkout.session.completed', 'charge.refunded', 'checkout.session.expired', 'x'),
        created: fc.oneof(fc.integer(), fc.string()),
        data: fc.oneof(fc.jsonValue(), fc.record({ object: fc.dictionary(fc.string(), fc.jsonValue()) })),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(eventish, fc.jsonValue()), async (value) => {
        const payload = JSON.stringify(value) ?? 'null';
        const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET });
        await outcome(adapters.stripe!, Buffer.from(payload), { 'stripe-signature': header });
      }),
      { numRuns: 150 },
    );
  });

  it('cryptobot: correctly signed JSON of any shape is an event or a validation refusal', async () => {
    const key = createHash('sha256').update(CRYPTO_TOKEN).digest();
    const updateish = fc.record(
      {
        update_id: fc.oneof(fc.integer(), fc.string(), fc.double()),
        update_type: fc.constantFrom('invoice_paid', 'x'),
        payload: fc.oneof(
          fc.jsonValue(),
          fc.dictionary(fc.constantFrom('invoice_id', 'status', 'amount', 'fiat', 'currency_type'), fc.jsonValue()),
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(updateish, fc.jsonValue()), async (value) => {
        const payload = JSON.stringify(value) ?? 'null';
        const signature = createHmac('sha256', key).update(payload).digest('hex');
        await outcome(adapters.cryptobot!, Buffer.from(payload), { 'crypto-pay-api-signature': signature });
      }),
      { numRuns: 150 },
    );
  });

  it('yookassa: notification-shaped JSON of any content is an event, ignored, or a validation refusal', async () => {
    const notificationish = fc.record(
      {
        type: fc.constantFrom('notification', 'x'),
        event: fc.oneof(fc.constantFrom('payment.succeeded', 'refund.succeeded', 'payment.canceled', 'deal.closed'), fc.string()),
        object: fc.oneof(
          fc.jsonValue(),
          fc.dictionary(fc.constantFrom('id', 'payment_id', 'status'), fc.oneof(fc.string(), fc.jsonValue())),
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(notificationish, fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()), async (value, ip) => {
        await outcome(adapters.yookassa!, Buffer.from(JSON.stringify(value)), {}, ip);
      }),
      { numRuns: 150 },
    );
  });

  it.each(kinds)('%s: a body over the size limit is refused before it is read', async (kind) => {
    const huge = Buffer.alloc(WEBHOOK_MAX_BYTES + 1, 0x7b);
    await expect(adapters[kind]!.verifyWebhook({ rawBody: huge, headers: {}, sourceIp: '185.71.76.1' })).rejects.toMatchObject({
      type: 'validation',
      errors: { webhook: 'too-large' },
    });
  });

  it('manual: there is no webhook endpoint (not found)', async () => {
    const manual = paymentProviderAdapter('manual', { instructions: 'Pay by bank transfer to ...' }, {});
    expect(manual.acceptsWebhooks).toBe(false);
    await expect(manual.verifyWebhook({ rawBody: Buffer.from('{}'), headers: {}, sourceIp: '127.0.0.1' })).rejects.toMatchObject({
      type: 'not-found',
    });
  });
});
