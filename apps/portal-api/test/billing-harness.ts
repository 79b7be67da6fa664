import { JOBS, subscriptionsWithCounters } from '@svc/domain';
import { fleetOverRest, until } from '@svc/testkit';
import type { StandIn } from '@svc/testkit/provider-stand-in';
import { startStripeStandIn } from '@svc/testkit/stripe-stand-in';
import { createWorker, registerPaymentWebhooks, type WorkerService } from '@svc/worker';
import Stripe from 'stripe';
import { expect } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';
import { captureMail, type MailCapture } from './mail-capture.ts';

export const STRIPE_SECRET_KEY = 'sk_test_51BillingStandInKey000000000000';
export const STRIPE_WEBHOOK_SECRET = 'whsec_billingStandInWebhookSecret00000';
export const DAY_MS = 86_400_000;

/** Checkout Sessions as the Stripe stand-in keeps them: id -> session object. */
export type Sessions = Map<string, Record<string, any>>;

export interface BillingServer {
  p: PortalTestServer;
  mail: MailCapture;
  /** Stripe's API, played locally: Checkout Sessions created, read and listed by payment intent. */
  stripe: StandIn;
  sessions: Sessions;
  /** While true, Stripe answers 500 to a new Checkout Session. */
  stripeDown: boolean;
  /** Stripe takes this long to create a Checkout Session (racing requests arrive meanwhile). */
  stripeDelayMs: number;
  /** While set, Stripe answers a new Checkout Session with this existing one (another payment's). */
  stripeAnswersWith: string | null;
  /** The worker's payment jobs (process-event, sweep every 50 ms); null until startWorker. */
  worker: WorkerService | null;
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The portal and the admin API with the worker's webhook ingress on one server (as `svc start`
 * mounts them), Stripe's API played by a local stand-in (billing.api_base_urls), and the
 * worker's payment jobs in process when started (the mails are read by the test).
 */
export async function startBilling(env: Record<string, string> = {}): Promise<BillingServer> {
  // Stripe played locally (@svc/testkit/stripe-stand-in), on the server's fake clock.
  const played = await startStripeStandIn(() => server.p.s.clock.now());
  const stripe = played.stand;
  const sessions: Sessions = played.sessions as Sessions;
  const p = await startPortal(
    { SVC_BILLING_STRIPE_API_URL: stripe.base, SVC_PUBLIC_BASE_URL: 'https://cp.example.com', ...env },
    { rate_limits: { magic_link: { per_ip: { limit: 1000, window_seconds: 60 } } } },
    (root) => registerPaymentWebhooks(root),
  );
  const mail = await captureMail(p.s);
  const server: BillingServer = {
    p,
    mail,
    stripe,
    sessions,
    get stripeDown() {
      return played.down;
    },
    set stripeDown(v) {
      played.down = v;
    },
    get stripeDelayMs() {
      return played.delayMs;
    },
    set stripeDelayMs(v) {
      played.delayMs = v;
    },
    get stripeAnswersWith() {
      return played.answersWith;
    },
    set stripeAnswersWith(v) {
      played.answersWith = v;
    },
    worker: null,
    async startWorker() {
      server.worker = createWorker(p.s.runtime, { only: [JOBS.paymentsProcessEvent, JOBS.paymentsSweep], paymentsEveryMs: 50 });
      await server.worker.start();
    },
    async stopWorker() {
      await server.worker?.stop();
      server.worker = null;
    },
    async stop() {
      await server.worker?.stop();
      await mail.stop();
      await p.stop();
      await played.close();
    },
  };
  return server;
}

const unique = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;

/** A client made by the admin, signed in by magic link: id, email and a client access token. */
export async function customer(b: BillingServer): Promise<{ id: string; email: string; token: string }> {
  const c = (await b.p.post('/api/v1/clients', { email: unique('buyer') })) as { id: string; email: string };
  await b.p.s.api.post('/portal/v1/auth/magic-link', { email: c.email });
  const pair = await b.p.s.api.post('/portal/v1/auth/callback', { token: await b.mail.tokenFor(c.email) });
  expect(pair.status, pair.text).toBe(200);
  return { ...c, token: pair.body.access_token };
}

/** The admin API as the owner, in the shape the fleet helpers take. */
export const ownerApi = (b: BillingServer) => ({
  get: (path: string) => b.p.s.api.get(path, { token: b.p.token }),
  post: (path: string, body?: unknown) => b.p.s.api.post(path, body, { token: b.p.token }),
});

/** A node with one VLESS inbound in an access group: what a plan grants, and whose revision a payment moves. */
export async function nodeWithGroup(b: BillingServer): Promise<{ nodeId: string; groupId: string }> {
  const api = ownerApi(b);
  const node = await fleetOverRest.createNode(api);
  const profile = await fleetOverRest.createInboundProfile(api, 'vless-tcp');
  const inbound = await fleetOverRest.createInbound(api, {
    nodeId: node.id,
    profileId: profile.id,
    port: 20_000 + Math.floor(Math.random() * 20_000),
  });
  const group = await fleetOverRest.createAccessGroup(api, [inbound.id]);
  return { nodeId: node.id, groupId: group.id };
}

export async function desiredRevision(b: BillingServer, nodeId: string): Promise<number> {
  const res = await ownerApi(b).get(`/api/v1/nodes/${nodeId}`);
  expect(res.status).toBe(200);
  return res.body.desired_revision;
}

export async function plan(
  b: BillingServer,
  over: Record<string, unknown> = {},
): Promise<{ id: string; name: string; price: number; currency: string; duration_days: number }> {
  return b.p.post('/api/v1/plans', {
    name: `Plan ${Math.random().toString(36).slice(2, 8)}`,
    price: 990,
    currency: 'EUR',
    duration_days: 30,
    ...over,
  });
}

export async function stripeProvider(b: BillingServer): Promise<{ id: string; webhook_url: string }> {
  return b.p.post('/api/v1/payment-providers', {
    kind: 'stripe',
    name: 'Card',
    enabled: true,
    config: { secret_key: STRIPE_SECRET_KEY, webhook_secret: STRIPE_WEBHOOK_SECRET },
  });
}

export async function manualProvider(b: BillingServer): Promise<{ id: string }> {
  return b.p.post('/api/v1/payment-providers', {
    kind: 'manual',
    name: 'Bank transfer',
    enabled: true,
    config: { instructions: 'IBAN DE00 0000; reference: your email' },
  });
}

/** POST /portal/v1/checkout as `token` with `key` (no header when key is null). */
export const checkout = (b: BillingServer, token: string, key: string | null, body: Record<string, unknown>) =>
  b.p.s.api.post('/portal/v1/checkout', body, { token, headers: key === null ? {} : { 'idempotency-key': key } });

/** A Stripe event about a session, signed by the real `stripe` package at the server's (fake) clock, or `skewSeconds` off it. */
export function stripeEvent(
  b: BillingServer,
  type: string,
  object: Record<string, unknown>,
  id = `evt_${Math.random().toString(36).slice(2, 12)}`,
  skewSeconds = 0,
) {
  const at = Math.floor(b.p.s.clock.now().getTime() / 1000) + skewSeconds;
  const payload = JSON.stringify({ id, object: 'event', type, created: at, data: { object }, api_version: '2026-10-28.endive' });
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_WEBHOOK_SECRET, timestamp: at });
  return { id, payload, header };
}

/** POST /webhooks/payments/{provider} with a raw body and headers, as the provider sends it. */
export async function postWebhook(b: BillingServer, providerId: string, payload: string, headers: Record<string, string>) {
  const res = await fetch(`${b.p.s.url}/webhooks/payments/${providerId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: payload,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** The session the stand-in made for a payment (by our payment id). */
export function sessionOf(b: BillingServer, paymentId: string): Record<string, any> {
  const s = [...b.sessions.values()].find((x) => x.metadata.payment_id === paymentId);
  if (!s) throw new Error(`no session for ${paymentId}`);
  return s;
}

/** The session the stand-in made for a payment, marked paid (what Stripe does when the payer pays). */
export function paySession(b: BillingServer, sessionId: string): Record<string, any> {
  const s = b.sessions.get(sessionId);
  if (!s) throw new Error(`no session ${sessionId}`);
  Object.assign(s, { status: 'complete', payment_status: 'paid' });
  return s;
}

/** What the billing tests read back from the database (`server` is read at each call: it is set in beforeAll). */
export function billingReads(server: () => BillingServer) {
  const db = () => server().p.s.deps.db;
  const paymentRow = (id: string) => db().selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return {
    db,
    paymentRow,
    settled: (id: string, status: string) => until(`payment ${id} ${status}`, async () => (await paymentRow(id)).status === status),
    eventCount: async () =>
      Number((await db().selectFrom('payment_events').select(db().fn.countAll().as('n')).executeTakeFirstOrThrow()).n),
    /** A client's subscriptions with their counters (subscription_counters). */
    subscriptionsOf: (clientId: string) => subscriptionsWithCounters(db()).where('client_id', '=', clientId).execute(),
  };
}
