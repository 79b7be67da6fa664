import Stripe from 'stripe';
import { type StandIn, startStandIn } from './provider-stand-in.ts';

/**
 * Stripe played locally, for the tests that run the whole path in a browser: its API (Checkout
 * Sessions created, read, and listed by payment intent, as the adapter calls them) and its hosted
 * payment page (GET /c/pay/{session}: a "Pay" button that sends the payer to the session's
 * success_url, "Cancel" to its cancel_url, as Stripe's page does after the card is taken), and
 * the webhook events Stripe would sign, signed by the real `stripe` package. Point the control
 * plane at it with SVC_BILLING_STRIPE_API_URL=<base>.
 */
export interface StripeStandIn {
  base: string;
  stand: StandIn;
  /** Sessions by id, as Stripe keeps them. */
  sessions: Map<string, StripeSession>;
  /** While true, a new Checkout Session is answered 500 (Stripe down). */
  down: boolean;
  /** Stripe takes this long to create a Checkout Session (racing requests arrive meanwhile). */
  delayMs: number;
  /** While set, a new Checkout Session is answered with this existing one (another payment's). */
  answersWith: string | null;
  /** The session made for our payment `paymentId` (metadata.payment_id). */
  sessionOf(paymentId: string): StripeSession;
  /** The payer paid: the session is complete and paid (what a re-read then sees). */
  pay(sessionId: string): StripeSession;
  /** A signed event about `object`, as Stripe posts it: the body and its Stripe-Signature header. */
  event(type: string, object: Record<string, unknown>, secret: string): { id: string; payload: string; header: string };
  close(): Promise<void>;
}

export interface StripeSession {
  id: string;
  object: 'checkout.session';
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid';
  amount_total: number;
  currency: string;
  client_reference_id: string | undefined;
  metadata: { payment_id: string | undefined };
  payment_intent: string;
  url: string;
  expires_at: number;
  success_url: string | undefined;
  cancel_url: string | undefined;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startStripeStandIn(now: () => Date = () => new Date()): Promise<StripeStandIn> {
  const stand = await startStandIn();
  const sessions = new Map<string, StripeSession>();
  let n = 0;
  stand.handle(async (req) => {
    const [path, query = ''] = req.path.split('?') as [string, string?];
    if (req.method === 'POST' && path === '/v1/checkout/sessions') {
      if (self.down) return { status: 500, json: { error: { type: 'api_error', message: 'down for the test' } } };
      if (self.delayMs > 0) await new Promise((r) => setTimeout(r, self.delayMs));
      if (self.answersWith) return { status: 200, json: sessions.get(self.answersWith) };
      const form = Object.fromEntries(new URLSearchParams(req.body));
      const id = `cs_test_${++n}_${Math.random().toString(36).slice(2, 8)}`;
      const session: StripeSession = {
        id,
        object: 'checkout.session',
        status: 'open',
        payment_status: 'unpaid',
        amount_total: Number(form['line_items[0][price_data][unit_amount]']),
        currency: form['line_items[0][price_data][currency]'] ?? 'eur',
        client_reference_id: form.client_reference_id,
        metadata: { payment_id: form['metadata[payment_id]'] },
        payment_intent: `pi_${id}`,
        url: `${stand.base}/c/pay/${id}`,
        expires_at: Math.floor(now().getTime() / 1000) + 86400,
        success_url: form.success_url,
        cancel_url: form.cancel_url,
      };
      sessions.set(id, session);
      return { status: 200, json: session };
    }
    const page = /^\/c\/pay\/([A-Za-z0-9_]+)$/.exec(path);
    if (req.method === 'GET' && page) {
      const s = sessions.get(page[1] as string);
      if (!s) return { status: 404, text: 'no such session' };
      // The hosted page: what is paid and two ways out (a plain HTML page; the test's browser renders it).
      return {
        status: 200,
        html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Stripe Checkout (stand-in)</title></head><body><main><h1>Pay ${(s.amount_total / 100).toFixed(2)} ${escapeHtml(s.currency.toUpperCase())}</h1><a id="pay" href="${escapeHtml(s.success_url ?? '')}">Pay</a> <a id="cancel" href="${escapeHtml(s.cancel_url ?? '')}">Cancel</a></main></body></html>`,
      };
    }
    const one = /^\/v1\/checkout\/sessions\/([A-Za-z0-9_]+)$/.exec(path);
    if (req.method === 'GET' && one) {
      const s = sessions.get(one[1] as string);
      return s ? { status: 200, json: s } : { status: 404, json: { error: { type: 'invalid_request_error', message: 'No such session' } } };
    }
    if (req.method === 'GET' && path === '/v1/checkout/sessions') {
      const intent = new URLSearchParams(query).get('payment_intent');
      return {
        status: 200,
        json: { object: 'list', data: [...sessions.values()].filter((s) => s.payment_intent === intent), has_more: false },
      };
    }
    return { status: 404, json: { error: { type: 'invalid_request_error', message: `no route ${req.path}` } } };
  });
  const sessionOf = (paymentId: string) => {
    const s = [...sessions.values()].find((x) => x.metadata.payment_id === paymentId);
    if (!s) throw new Error(`no Stripe session for ${paymentId}`);
    return s;
  };
  const self: StripeStandIn = {
    base: stand.base,
    stand,
    sessions,
    down: false,
    delayMs: 0,
    answersWith: null,
    sessionOf,
    pay(sessionId) {
      const s = sessions.get(sessionId);
      if (!s) throw new Error(`no Stripe session ${sessionId}`);
      Object.assign(s, { status: 'complete', payment_status: 'paid' });
      return s;
    },
    event(type, object, secret) {
      const at = Math.floor(now().getTime() / 1000);
      const id = `evt_${Math.random().toString(36).slice(2, 12)}`;
      const payload = JSON.stringify({ id, object: 'event', type, created: at, data: { object }, api_version: '2026-10-28.endive' });
      return { id, payload, header: Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: at }) };
    },
    close: () => stand.close(),
  };
  return self;
}
