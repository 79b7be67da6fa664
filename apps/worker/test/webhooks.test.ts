import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mountAdminApi } from '@svc/admin-api';
import {
  type DomainContext,
  dispatchEvents,
  recordEvent,
  SYSTEM,
  unitOfWork,
  verifyWebhookSignature,
  WEBHOOK_BACKOFF_MS,
  withActor,
} from '@svc/domain';
import { adminWithRole, login, OWNER, setupOwner, startTestServer, type TestServer, until } from '@svc/testkit';
import { type SmtpReceiver, startSmtpReceiver } from '@svc/testkit/smtp-receiver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type WorkerService } from '../src/worker.ts';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.ts';

// Events -> notifications with the worker running (in process, or BullMQ with REDIS_URL):
// an event recorded in a unit of work becomes a mail to each owner and one signed delivery
// per subscribed endpoint, retried with backoff on the fake clock, visible in the delivery log.
let s: TestServer;
let worker: WorkerService;
let smtp: SmtpReceiver;
let ctx: DomainContext;
const owners: string[] = [];
beforeAll(async () => {
  smtp = await startSmtpReceiver();
  s = await startTestServer({
    env: { SVC_SMTP_URL: smtp.url, SVC_PUBLIC_BASE_URL: 'https://cp.example.com' },
    mount: mountAdminApi,
  });
  const owner = await setupOwner(s);
  owners.push(owner.admin.email, (await adminWithRole(s, owner.access_token, 'owner', 'second-owner@example.com')).email);
  await adminWithRole(s, owner.access_token, 'admin', 'an-admin@example.com');
  viewer = await adminWithRole(s, owner.access_token, 'viewer', 'a-viewer@example.com');
  ctx = withActor(s.deps, SYSTEM);
  // Sweeps every 50 ms: a retry is due as soon as the fake clock passes its backoff.
  // A 1 s attempt limit (10 s in production), so the timeout test does not wait long.
  worker = createWorker(s.runtime, { sweepEveryMs: 3_600_000, eventsEveryMs: 50, webhooksEveryMs: 50, webhookTimeoutMs: 1000 });
  await worker.start();
});
afterAll(async () => {
  await worker?.stop();
  await s?.stop();
  await smtp?.close();
});

let viewer: { email: string; password: string };
const tokens = new Map<string, { token: string; at: number }>();
/** An access token still valid on the fake clock (the tests move it by hours; tokens live 15 minutes). */
async function tokenOf(who: { email: string; password: string }): Promise<string> {
  const held = tokens.get(who.email);
  if (held && s.clock.now().getTime() - held.at < 10 * 60_000) return held.token;
  const token = (await login(s, who.email, who.password)).access_token;
  tokens.set(who.email, { token, at: s.clock.now().getTime() });
  return token;
}

let n = 0;
/** client.registered in a committed unit of work, as the portal's registration records it. */
async function registered() {
  const email = `applicant-${++n}@example.org`;
  const payload = {
    client_id: `cli_test${n}`,
    email,
    status: 'pending' as const,
    method: 'password',
    registration_mode: 'application' as const,
  };
  let id = '';
  await unitOfWork(ctx, async (uow) => {
    id = await recordEvent(uow, { type: 'client.registered', payload }, s.clock.now());
  });
  return { id, email, payload };
}

async function endpoint(receiver: WebhookReceiver, body: Record<string, unknown> = {}) {
  const res = await s.api.post('/api/v1/webhooks', { url: receiver.url, ...body }, { token: await tokenOf(OWNER) });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

/** The delivery log as `who` reads it (owners and admins read the receivers' answers; viewers do not). */
const deliveries = async (webhookId: string, query = '', who: { email: string; password: string } = OWNER) => {
  const res = await s.api.get(`/api/v1/webhooks/${webhookId}/deliveries${query}`, { token: await tokenOf(who) });
  expect(res.status).toBe(200);
  return res.body.items as Array<Record<string, any>>;
};
const forEvent = (r: WebhookReceiver, eventId: string) => r.received.filter((w) => JSON.parse(w.body).id === eventId);

describe('webhook delivery', () => {
  let receiver: WebhookReceiver;
  let hook: { id: string; secret: string };
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    hook = await endpoint(receiver, { event_types: ['client.registered'] });
  });
  afterAll(() => receiver.close());

  it('client.registered recorded in a unit of work is delivered once: the envelope, the headers, a signature that verifies with the documented scheme', async () => {
    const event = await registered();
    await until('the delivery', () => forEvent(receiver, event.id).length === 1);
    const [got] = forEvent(receiver, event.id);
    const envelope = JSON.parse(got?.body as string);
    expect(envelope).toEqual({
      id: event.id,
      type: 'client.registered',
      version: 1,
      occurred_at: s.clock.now().toISOString(),
      data: event.payload,
    });
    expect(got?.headers['content-type']).toBe('application/json');
    expect(got?.headers['x-svc-event']).toBe('client.registered');
    expect(got?.headers['x-svc-event-id']).toBe(event.id);
    expect(got?.headers['x-svc-delivery']).toMatch(/^whd_/);
    expect(got?.headers['x-svc-attempt']).toBe('1');
    const signature = got?.headers['x-svc-signature'] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    // What docs/notifications.md tells receivers to do:
    expect(verifyWebhookSignature(hook.secret, got?.body as string, signature, { now: s.clock.now() })).toBe(true);
    expect(verifyWebhookSignature(`${hook.secret}x`, got?.body as string, signature, { now: s.clock.now() })).toBe(false);
    expect(verifyWebhookSignature(hook.secret, `${got?.body} `, signature, { now: s.clock.now() })).toBe(false);
    // A replay ten minutes later is refused by the timestamp.
    expect(verifyWebhookSignature(hook.secret, got?.body as string, signature, { now: new Date(s.clock.now().getTime() + 600_000) })).toBe(
      false,
    );

    await until('the delivery log', async () =>
      (await deliveries(hook.id)).some((d) => d.event_id === event.id && d.status === 'succeeded'),
    );
    const [logged] = (await deliveries(hook.id)).filter((d) => d.event_id === event.id);
    expect(logged).toMatchObject({
      id: got?.headers['x-svc-delivery'],
      webhook_id: hook.id,
      event_type: 'client.registered',
      status: 'succeeded',
      attempts: 1,
      last_response_status: 200,
      last_error: null,
      next_attempt_at: null,
      delivered_at: s.clock.now().toISOString(),
    });
    // Dispatching again finds nothing to do: the event's effects happened once.
    expect(await dispatchEvents(ctx)).toEqual({ events: 0, mails: 0, deliveries: 0 });
    const dispatched = await s.deps.db.selectFrom('events').select('dispatched_at').where('id', '=', event.id).executeTakeFirstOrThrow();
    expect(dispatched.dispatched_at).not.toBeNull();
    expect(forEvent(receiver, event.id)).toHaveLength(1);
  });

  it("a receiver answering 500 twice gets the delivery on the third attempt, after 30 s and 2 min of backoff; the log shows attempts and status (to a viewer, the status without the receiver's words)", async () => {
    receiver.answer(500, 500);
    const event = await registered();
    await until('the first attempt', () => forEvent(receiver, event.id).length === 1);
    await until('the failure written down', async () =>
      (await deliveries(hook.id)).some((d) => d.event_id === event.id && d.attempts === 1 && d.last_response_status === 500),
    );
    let [d] = (await deliveries(hook.id)).filter((x) => x.event_id === event.id);
    expect(d).toMatchObject({ status: 'pending', attempts: 1, last_response_status: 500, delivered_at: null });
    expect(d?.last_error).toMatch(/^HTTP 500: receiver says no \(500\)/);
    expect((d?.last_error as string).length).toBeLessThanOrEqual(500);
    // A viewer reads the status, never the receiver's words (issue 29 item 6).
    const [seen] = (await deliveries(hook.id, '', viewer)).filter((x) => x.event_id === event.id);
    expect(seen).toEqual({ ...d, last_error: 'HTTP 500' });
    expect(d?.next_attempt_at).toBe(new Date(s.clock.now().getTime() + WEBHOOK_BACKOFF_MS[0]).toISOString());
    expect((await deliveries(hook.id, '?status=pending')).map((x) => x.id)).toContain(d?.id);

    // Not due yet: nothing is sent however often the sweep runs.
    s.clock.advance(WEBHOOK_BACKOFF_MS[0] - 1000);
    await dispatchEvents(ctx);
    expect(forEvent(receiver, event.id)).toHaveLength(1);
    s.clock.advance(1000);
    await until('the second attempt', () => forEvent(receiver, event.id).length === 2);
    await until('the second failure written down', async () =>
      (await deliveries(hook.id)).some(
        (x) =>
          x.event_id === event.id &&
          x.attempts === 2 &&
          x.next_attempt_at !== null &&
          x.status === 'pending' &&
          x.last_response_status === 500,
      ),
    );
    [d] = (await deliveries(hook.id)).filter((x) => x.event_id === event.id);
    expect(d?.next_attempt_at).toBe(new Date(s.clock.now().getTime() + WEBHOOK_BACKOFF_MS[1]).toISOString());

    s.clock.advance(WEBHOOK_BACKOFF_MS[1]);
    await until('the third attempt', () => forEvent(receiver, event.id).length === 3);
    await until('success written down', async () =>
      (await deliveries(hook.id)).some((x) => x.event_id === event.id && x.status === 'succeeded'),
    );
    [d] = (await deliveries(hook.id)).filter((x) => x.event_id === event.id);
    expect(d).toMatchObject({ status: 'succeeded', attempts: 3, last_response_status: 200, last_error: null, next_attempt_at: null });
    expect((await deliveries(hook.id, '?status=succeeded')).map((x) => x.id)).toContain(d?.id);
    expect((await deliveries(hook.id, '?status=pending')).map((x) => x.id)).not.toContain(d?.id);
    // The same delivery and body each time, the attempt counted, each signed anew.
    const attempts = forEvent(receiver, event.id);
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
    expect(new Set(attempts.map((a) => a.headers['x-svc-delivery'])).size).toBe(1);
    expect(attempts.map((a) => a.headers['x-svc-attempt'])).toEqual(['1', '2', '3']);
    for (const a of attempts)
      expect(
        verifyWebhookSignature(hook.secret, a.body, a.headers['x-svc-signature'] as string, { now: s.clock.now(), toleranceSeconds: 3600 }),
      ).toBe(true);
  });

  it('endpoints receive only the types they subscribe to; disabled endpoints receive nothing; one delivery per endpoint', async () => {
    const other = await startWebhookReceiver();
    try {
      const all = await endpoint(other); // every type
      const off = await endpoint(other, { enabled: false });
      const event = await registered();
      await until('both subscribed endpoints', () => forEvent(receiver, event.id).length === 1 && forEvent(other, event.id).length === 1);
      expect(forEvent(other, event.id)[0]?.headers['x-svc-delivery']).toBe((await deliveries(all.id))[0]?.id);
      expect(await deliveries(off.id)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('POST /webhooks/{id}/test sends a signed webhook.test ping (202) whose outcome shows in the delivery log', async () => {
    const res = await s.api.post(`/api/v1/webhooks/${hook.id}/test`, undefined, { token: await tokenOf(OWNER) });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ webhook_id: hook.id, event_type: 'webhook.test', status: 'pending', attempts: 0 });
    await until('the ping', () => receiver.received.some((w) => w.headers['x-svc-delivery'] === res.body.id));
    const ping = receiver.received.find((w) => w.headers['x-svc-delivery'] === res.body.id);
    expect(JSON.parse(ping?.body as string)).toMatchObject({ type: 'webhook.test', data: { webhook_id: hook.id } });
    expect(
      verifyWebhookSignature(hook.secret, ping?.body as string, ping?.headers['x-svc-signature'] as string, { now: s.clock.now() }),
    ).toBe(true);
    await until('logged', async () => (await deliveries(hook.id)).some((d) => d.id === res.body.id && d.status === 'succeeded'));
  });
});

describe('webhook delivery: failures for good', () => {
  it('a redirect is not followed (a failed attempt); after 8 failed attempts over the backoff the delivery is failed for good', async () => {
    const receiver = await startWebhookReceiver(Array(8).fill(302));
    try {
      const hook = await endpoint(receiver, { event_types: ['client.registered'] });
      const event = await registered();
      for (let attempt = 1; attempt <= 8; attempt++) {
        await until(`attempt ${attempt}`, () => forEvent(receiver, event.id).length === attempt);
        await until(`attempt ${attempt} written down`, async () =>
          (await deliveries(hook.id)).some((d) => d.attempts === attempt && (d.status === 'failed' || d.next_attempt_at !== null)),
        );
        if (attempt < 8) s.clock.advance(WEBHOOK_BACKOFF_MS[attempt - 1] as number);
      }
      const [d] = await deliveries(hook.id, '?status=failed');
      expect(d).toMatchObject({ event_id: event.id, status: 'failed', attempts: 8, last_response_status: 302, next_attempt_at: null });
      expect(d?.last_error).toMatch(/^HTTP 302/);
      // Each attempt reached the receiver once: the Location was not followed.
      expect(forEvent(receiver, event.id)).toHaveLength(8);
      expect(receiver.received.filter((w) => w.headers['x-svc-delivery'] === d?.id)).toHaveLength(8);
      // Nothing more, however long we wait.
      s.clock.advance(7 * 24 * 3_600_000);
      await dispatchEvents(ctx);
      expect(forEvent(receiver, event.id)).toHaveLength(8);
    } finally {
      await receiver.close();
    }
  });
});

describe('webhook delivery: a receiver that does not answer', () => {
  it('the attempt times out and is retried later; the log says "not reachable", as for a refused or closed port (to a viewer: not delivered)', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent = createServer(() => {
      // Reads the request, never answers.
    });
    silent.on('connection', (c) => sockets.add(c));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const res = await s.api.post('/api/v1/webhooks', { url: `http://127.0.0.1:${port}/slow` }, { token: await tokenOf(OWNER) });
      const ping = await s.api.post(`/api/v1/webhooks/${res.body.id}/test`, undefined, { token: await tokenOf(OWNER) });
      expect(ping.status).toBe(202);
      await until('the timeout written down', async () =>
        (await deliveries(res.body.id)).some((d) => d.attempts === 1 && d.last_error !== null),
      );
      const [d] = await deliveries(res.body.id);
      expect(d).toMatchObject({ status: 'pending', attempts: 1, last_response_status: null, last_error: 'not reachable' });
      expect((await deliveries(res.body.id, '', viewer))[0]).toEqual({ ...d, last_error: 'not delivered' });
      expect(d?.next_attempt_at).not.toBeNull();
    } finally {
      for (const c of sockets) c.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

// The outbox's rules (an event exists only if its unit committed; effects once under concurrent
// dispatches; which endpoints and owners): packages/domain-tests/test/webhooks/dispatch-events.test.ts.
describe('owner notification mail', () => {
  it('client.registered mails every owner (not admins or viewers by default): who registered and the admin API path to approve', async () => {
    const event = await registered();
    await until('a mail to each owner', () => smtp.mails.filter((m) => m.headers.subject?.includes(event.email)).length === owners.length);
    const mails = smtp.mails.filter((m) => m.headers.subject?.includes(event.email));
    expect(mails.flatMap((m) => m.to).sort()).toEqual([...owners].sort());
    for (const m of mails) {
      expect(m.headers.subject).toBe(`New registration waiting for approval: ${event.email}`);
      expect(m.headers['x-svc-category']).toBe('event:client.registered');
      expect(m.text).toContain(`Email:      ${event.email}`);
      expect(m.text).toContain(`POST https://cp.example.com/api/v1/clients/${event.payload.client_id}/approve`);
    }
    expect(smtp.mails.some((m) => m.to.includes('an-admin@example.com') || m.to.includes('a-viewer@example.com'))).toBe(false);
  });
});
