import { randomUUID } from 'node:crypto';
import {
  CheckoutInput,
  type PortalCtx,
  parseInput,
  processPaymentEvent,
  receivePaymentWebhook,
  recheckPayment,
  SYSTEM,
  startCheckout,
  withActor,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { type StandIn, startStandIn } from '@svc/testkit/provider-stand-in';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditOf, refusal } from '../support.ts';

// Issue 29 item 7: what a provider reports settles a payment only when it names that payment by
// both ids (ours in its metadata, its own as the checkout stored it) and, for a success, says
// the amount and currency paid; a checkout answered with another payment's id stores nothing.
// Through the real Stripe adapter, its API played by a local stand-in, events signed by `stripe`.
const SECRET_KEY = `sk_test_${randomUUID().replaceAll('-', '')}`;
const WEBHOOK_SECRET = `whsec_${randomUUID().replaceAll('-', '')}`;

let bed: DomainTestbed;
let api: StandIn;
/** Checkout Sessions as the stand-in keeps them. */
const sessions = new Map<string, Record<string, unknown>>();
/** When set, the next new session is answered with this existing session instead. */
let answerWith: string | null = null;
let providerId: string;
let planId: string;

beforeAll(async () => {
  api = await startStandIn();
  api.handle((req) => {
    if (req.method === 'POST' && req.path === '/v1/checkout/sessions') {
      if (answerWith) return { status: 200, json: sessions.get(answerWith) };
      const form = Object.fromEntries(new URLSearchParams(req.body));
      const id = `cs_test_${randomUUID().replaceAll('-', '')}`;
      const session = {
        id,
        object: 'checkout.session',
        status: 'open',
        payment_status: 'unpaid',
        amount_total: Number(form['line_items[0][price_data][unit_amount]']),
        currency: form['line_items[0][price_data][currency]'],
        metadata: { payment_id: form['metadata[payment_id]'] },
        url: `https://checkout.stripe.example/c/pay/${id}`,
      };
      sessions.set(id, session);
      return { status: 200, json: session };
    }
    const one = /^\/v1\/checkout\/sessions\/([A-Za-z0-9_]+)/.exec(req.path);
    const s = one ? sessions.get(one[1] as string) : undefined;
    return s ? { status: 200, json: s } : { status: 404, json: { error: { type: 'invalid_request_error' } } };
  });
  bed = await createDomainTestbed({ env: { SVC_BILLING_STRIPE_API_URL: api.base } });
  const make = fixtures(bed.ctx());
  providerId = (
    await make.paymentProvider({ kind: 'stripe', enabled: true, config: { secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET } })
  ).id;
  planId = (await make.plan({ price: 990, currency: 'EUR' })).id;
});
afterAll(async () => {
  await bed?.close();
  await api?.close();
});

const db = () => bed.deps.db;
const paymentRow = (id: string) => db().selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** A verified customer's pending Stripe checkout: the payment and its session at the stand-in. */
async function stripeCheckout(key = randomUUID()) {
  const client = await fixtures(bed.ctx()).client();
  await db().updateTable('clients').set({ email_verified_at: bed.clock.now() }).where('id', '=', client.id).execute();
  const portal = withActor(bed.deps, { type: 'client', id: client.id }) as PortalCtx;
  const input = parseInput(CheckoutInput, { plan_id: planId, provider_id: providerId });
  const { checkout } = await startCheckout(portal, key, input);
  const payment = await paymentRow(checkout.payment_id);
  return { client, payment, session: sessions.get(payment.provider_payment_id as string) as Record<string, any> };
}

/** Stripe reports `session` paid: the signed event through the ingress's verb, then processed. Returns the event's outcome. */
async function reportPaid(session: Record<string, unknown>): Promise<string | null> {
  const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
  const at = Math.floor(bed.clock.now().getTime() / 1000);
  const payload = JSON.stringify({
    id: eventId,
    object: 'event',
    type: 'checkout.session.completed',
    created: at,
    data: { object: { ...session, status: 'complete', payment_status: 'paid' } },
  });
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: at });
  const ctx = withActor(bed.deps, SYSTEM);
  const receipt = await receivePaymentWebhook(ctx, providerId, {
    rawBody: Buffer.from(payload),
    headers: { 'stripe-signature': header },
    sourceIp: '203.0.113.9',
  });
  expect(receipt.received).toBe('stored');
  const stored = await db().selectFrom('payment_events').select('id').where('event_id', '=', eventId).executeTakeFirstOrThrow();
  return processPaymentEvent(ctx, stored.id);
}

const mismatchAudit = async (paymentId: string) =>
  (await auditOf(bed, paymentId)).filter((a) => a.action === 'payment.mismatch').map((a) => a.details as Record<string, any>);

describe('a provider event settles only the payment both its ids name', () => {
  it("an event with our payment id and another checkout's id is not applied: outcome ids-mismatch, audited, neither payment moves", async () => {
    const a = await stripeCheckout();
    const b = await stripeCheckout();
    const outcome = await reportPaid({ ...b.session, metadata: { payment_id: a.payment.id } });
    expect(outcome).toBe('ids-mismatch');
    expect((await paymentRow(a.payment.id)).status).toBe('pending');
    expect((await paymentRow(b.payment.id)).status).toBe('pending');
    expect(await mismatchAudit(a.payment.id)).toEqual([
      expect.objectContaining({
        source: 'webhook',
        reason: 'ids',
        expected: { payment_id: a.payment.id, provider_payment_id: a.session.id },
        reported: { payment_id: a.payment.id, provider_payment_id: b.session.id },
      }),
    ]);
  });

  it("an event with the checkout's id but without our payment id, or naming another of ours, is not applied", async () => {
    const a = await stripeCheckout();
    const other = await stripeCheckout();
    expect(await reportPaid({ ...a.session, metadata: {} })).toBe('ids-mismatch');
    expect(await reportPaid({ ...a.session, metadata: { payment_id: `pay_${'0'.repeat(26)}` } })).toBe('ids-mismatch');
    expect(await reportPaid({ ...a.session, metadata: { payment_id: other.payment.id } })).toBe('ids-mismatch');
    expect((await paymentRow(a.payment.id)).status).toBe('pending');
    expect((await paymentRow(other.payment.id)).status).toBe('pending');
  });

  it('an event that names the payment by both ids, with its amount and currency, applies the plan', async () => {
    const { client, payment, session } = await stripeCheckout();
    expect(await reportPaid(session)).toBe('applied');
    expect((await paymentRow(payment.id)).status).toBe('succeeded');
    expect(await db().selectFrom('subscriptions').select('id').where('client_id', '=', client.id).execute()).toHaveLength(1);
  });
});

describe("a provider's success must say the amount and currency paid", () => {
  it('a success without an amount, or without a currency, is not applied: outcome incomplete, audited', async () => {
    const { client, payment, session } = await stripeCheckout();
    expect(await reportPaid({ ...session, amount_total: undefined })).toBe('incomplete');
    expect(await reportPaid({ ...session, currency: undefined })).toBe('incomplete');
    expect(await reportPaid({ ...session, amount_total: '990' })).toBe('incomplete');
    expect((await paymentRow(payment.id)).status).toBe('pending');
    expect(await db().selectFrom('subscriptions').select('id').where('client_id', '=', client.id).execute()).toEqual([]);
    const audits = await mismatchAudit(payment.id);
    expect(audits).toHaveLength(3);
    expect(audits[0]).toMatchObject({
      source: 'webhook',
      reason: 'no amount',
      expected: { amount: 990, currency: 'EUR' },
      reported: { amount: null, currency: 'EUR' },
    });
    // Another amount is a mismatch, as before.
    expect(await reportPaid({ ...session, amount_total: 1 })).toBe('mismatch');
  });

  it("the worker's re-read: a paid session without its amount is not applied, nor one that names another payment; the session as made is", async () => {
    const { payment, session } = await stripeCheckout();
    Object.assign(session, { status: 'complete', payment_status: 'paid', amount_total: undefined });
    expect(await recheckPayment(bed.system(), payment.id)).toBe('pending');
    expect(await mismatchAudit(payment.id)).toEqual([expect.objectContaining({ source: 're-read', reason: 'no amount' })]);
    Object.assign(session, { amount_total: 990, metadata: { payment_id: `pay_${'1'.repeat(26)}` } });
    expect(await recheckPayment(bed.system(), payment.id)).toBe('pending');
    expect((await paymentRow(payment.id)).status).toBe('pending');
    Object.assign(session, { metadata: { payment_id: payment.id } });
    expect(await recheckPayment(bed.system(), payment.id)).toBe('settled');
    expect((await paymentRow(payment.id)).status).toBe('succeeded');
  });
});

describe("a checkout the provider answers with another payment's checkout", () => {
  it('is a bad-gateway refusal that stores nothing: the payment stays without a checkout, the same key retries and gets its own', async () => {
    const first = await stripeCheckout();
    answerWith = first.session.id;
    const key = randomUUID();
    const err = await refusal(stripeCheckout(key)).finally(() => {
      answerWith = null;
    });
    expect(err.type).toBe('bad-gateway');
    expect(err.message).toContain('another payment');
    const row = await db().selectFrom('payments').selectAll().where('idempotency_key', '=', key).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'pending', provider_payment_id: null, checkout_url: null, checkout_started_at: null });
    expect((await auditOf(bed, row.id)).map((a) => a.action)).toEqual(['payment.created']);
    expect((await paymentRow(first.payment.id)).provider_payment_id).toBe(first.session.id);
    expect(bed.logs.some((l) => l.level === 50 && l.payment_id === row.id)).toBe(true);
    // The same key again: the provider, right this time, makes this payment's own checkout.
    const portal = withActor(bed.deps, { type: 'client', id: row.client_id }) as PortalCtx;
    const retried = await startCheckout(portal, key, parseInput(CheckoutInput, { plan_id: planId, provider_id: providerId }));
    expect(retried.checkout.payment_id).toBe(row.id);
    expect(retried.checkout.checkout_url).not.toBe(first.session.url);
    expect((await paymentRow(row.id)).provider_payment_id).not.toBe(first.session.id);
  });
});
