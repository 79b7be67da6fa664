import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateWebhookInput,
  createWebhook,
  deliverWebhook,
  parseInput,
  testWebhook,
  UpdateWebhookInput,
  updateWebhook,
  verifyWebhookSignature,
  WEBHOOK_BACKOFF_MS,
  WEBHOOK_MAX_ATTEMPTS,
} from '@svc/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileTestbed } from '../support.ts';

// One delivery attempt and what follows (docs/notifications.md), at the verb deliverWebhook,
// against a real receiver on this machine: a 2xx is success, signed under the endpoint's secret;
// anything else is tried again after the backoff, and the last attempt fails for good; an attempt
// not due is not made. Each rule fails here when it is broken.
const t = fileTestbed();
let receiver: Server;
let url: string;
/** What the receiver answers next. */
let answer = 200;
const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.statusCode = answer;
      res.end(answer === 200 ? 'ok' : 'the receiver is down');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

const owner = () => t.bed.ctx();
const row = (id: string) => t.bed.deps.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** An endpoint (its secret, shown once) and one pending test delivery to it. */
async function pendingDelivery() {
  const hook = await createWebhook(owner(), parseInput(CreateWebhookInput, { url }));
  const delivery = await testWebhook(owner(), hook.id);
  return { hook, id: delivery.id };
}

describe('deliverWebhook: one attempt', () => {
  it('a 2xx is success: sent once, signed under the endpoint’s secret, with the event and the attempt named', async () => {
    answer = 200;
    const { hook, id } = await pendingDelivery();
    const before = received.length;
    expect(await deliverWebhook(t.bed.system(), id)).toBe('succeeded');
    expect(received.length).toBe(before + 1);
    const got = received.at(-1)!;
    const signature = got.headers['x-svc-signature'] as string;
    expect(verifyWebhookSignature(hook.secret, got.body, signature, { now: t.bed.clock.now() })).toBe(true);
    expect(verifyWebhookSignature('another secret', got.body, signature, { now: t.bed.clock.now() })).toBe(false);
    expect(got.headers['x-svc-attempt']).toBe('1');
    expect(got.headers['x-svc-delivery']).toBe(id);
    expect(await row(id)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      last_response_status: 200,
      last_error: null,
      next_attempt_at: null,
    });
  });

  it('a failure is tried again after the backoff (30 s, then 2 min): not before it is due', async () => {
    answer = 503;
    const { id } = await pendingDelivery();
    expect(await deliverWebhook(t.bed.system(), id)).toBe('retrying');
    const first = await row(id);
    expect(first).toMatchObject({ status: 'pending', attempts: 1, last_response_status: 503 });
    expect(first.last_error).toBe('HTTP 503: the receiver is down');
    expect(first.next_attempt_at?.getTime()).toBe(t.bed.clock.now().getTime() + (WEBHOOK_BACKOFF_MS[0] as number));
    // Not due yet: no attempt, nothing sent, nothing counted.
    const sent = received.length;
    t.bed.clock.advance((WEBHOOK_BACKOFF_MS[0] as number) - 1000);
    expect(await deliverWebhook(t.bed.system(), id)).toBe('not-due');
    expect(received.length).toBe(sent);
    expect((await row(id)).attempts).toBe(1);
    t.bed.clock.advance(1000);
    expect(await deliverWebhook(t.bed.system(), id)).toBe('retrying');
    expect((await row(id)).next_attempt_at?.getTime()).toBe(t.bed.clock.now().getTime() + (WEBHOOK_BACKOFF_MS[1] as number));
    // The receiver back: the next due attempt succeeds.
    answer = 200;
    t.bed.clock.advance(WEBHOOK_BACKOFF_MS[1] as number);
    expect(await deliverWebhook(t.bed.system(), id)).toBe('succeeded');
    expect(await row(id)).toMatchObject({ status: 'succeeded', attempts: 3 });
  });

  it(`the ${WEBHOOK_MAX_ATTEMPTS}th failure is final: failed, no next attempt`, async () => {
    answer = 500;
    const { id } = await pendingDelivery();
    for (let n = 1; n < WEBHOOK_MAX_ATTEMPTS; n++) {
      expect(await deliverWebhook(t.bed.system(), id)).toBe('retrying');
      t.bed.clock.advance(WEBHOOK_BACKOFF_MS[n - 1] as number);
    }
    expect(await deliverWebhook(t.bed.system(), id)).toBe('failed');
    expect(await row(id)).toMatchObject({ status: 'failed', attempts: WEBHOOK_MAX_ATTEMPTS, next_attempt_at: null });
    expect(await deliverWebhook(t.bed.system(), id)).toBe('not-due');
  });

  it('an event for a disabled endpoint is not sent: it fails, saying why (a test delivery still goes)', async () => {
    answer = 200;
    const hook = await createWebhook(owner(), parseInput(CreateWebhookInput, { url }));
    const test = await testWebhook(owner(), hook.id);
    await updateWebhook(owner(), hook.id, parseInput(UpdateWebhookInput, { enabled: false }));
    // A test delivery is asked for by hand: it goes even to a disabled endpoint.
    expect(await deliverWebhook(t.bed.system(), test.id)).toBe('succeeded');
    // An event's delivery, as dispatch writes it, to the disabled endpoint.
    await t.bed.deps.db
      .insertInto('webhook_deliveries')
      .values({
        id: 'whd_disabled_event',
        endpoint_id: hook.id,
        event_id: 'evt_disabled',
        event_type: 'subscription.created',
        body: '{}',
        status: 'pending',
        next_attempt_at: t.bed.clock.now(),
        created_at: t.bed.clock.now(),
        updated_at: t.bed.clock.now(),
      })
      .execute();
    const sent = received.length;
    expect(await deliverWebhook(t.bed.system(), 'whd_disabled_event')).toBe('failed');
    expect(received.length).toBe(sent);
    expect(await row('whd_disabled_event')).toMatchObject({ status: 'failed', last_error: 'the endpoint is disabled' });
  });
});
