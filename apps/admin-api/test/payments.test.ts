import { randomUUID } from 'node:crypto';
import type { PaymentStatus } from '@svc/db';
import { newId, withActor } from '@svc/domain';
import { adminWithRole, type Fixtures, fixtures, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let viewerToken: string;
let make: Fixtures;
beforeAll(async () => {
  s = await startAdminApi();
  token = (await setupOwner(s)).access_token;
  viewerToken = (await adminWithRole(s, token, 'viewer')).access_token;
  make = fixtures(withActor(s.deps, TEST_OWNER));
});
afterAll(() => s.stop());

const now = () => s.clock.now();

// ---- payments are written by checkout and webhooks (payments issue), which have no use case yet:
// their rows are inserted directly; what they reference is made through the domain.
interface Refs {
  client_id: string;
  plan_id: string;
  provider_id: string;
  subscription_id: string | null;
}
const IDEMPOTENCY_KEY = `idem-${randomUUID()}`;
let keys = 0;
const CHECKOUT_URL = `https://checkout.example.com/${randomUUID()}`;
async function payment(refs: Refs, status: PaymentStatus = 'succeeded', amount = 990): Promise<string> {
  const id = newId('pay', now().getTime());
  await s.deps.db
    .insertInto('payments')
    .values({
      id,
      ...refs,
      amount,
      currency: 'EUR',
      status,
      provider_payment_id: `pi_${randomUUID()}`,
      idempotency_key: `${IDEMPOTENCY_KEY}-${keys++}`,
      checkout_url: CHECKOUT_URL,
      created_at: now(),
      updated_at: now(),
    })
    .execute();
  return id;
}

let a: Refs;
let b: Refs;
const ids: Record<string, string> = {};
const emails: Record<string, string> = {};
beforeAll(async () => {
  const [c1, c2] = [await make.client(), await make.client()].map((c) => {
    emails[c.id] = c.email;
    return c.id;
  }) as [string, string];
  const [plan, provider] = [async () => (await make.plan()).id, async () => (await make.paymentProvider()).id];
  a = {
    client_id: c1,
    plan_id: await plan(),
    provider_id: await provider(),
    subscription_id: (await make.subscription({ client_id: c1 })).id,
  };
  b = { client_id: c2, plan_id: await plan(), provider_id: await provider(), subscription_id: null };
  ids.a1 = await payment(a, 'succeeded');
  ids.a2 = await payment(a, 'refunded', 1500);
  ids.b1 = await payment(b, 'pending');
  ids.b2 = await payment(b, 'failed');
  ids.mix = await payment({ ...b, plan_id: a.plan_id }, 'canceled');
});

const list = async (query: string, t = token) => {
  const res = await s.api.get(`/api/v1/payments?limit=200&${query}`, { token: t });
  expect(res.status, res.text).toBe(200);
  return res.body.items.map((p: { id: string }) => p.id) as string[];
};

describe('payments (read-only)', () => {
  it("reads one payment: ids, the client's email, amount, currency, status, provider reference; no idempotency key or checkout URL", async () => {
    const res = await s.api.get(`/api/v1/payments/${ids.a2}`, { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: ids.a2,
      client_id: a.client_id,
      client_email: emails[a.client_id],
      plan_id: a.plan_id,
      provider_id: a.provider_id,
      subscription_id: a.subscription_id,
      amount: 1500,
      currency: 'EUR',
      status: 'refunded',
      provider_payment_id: expect.stringMatching(/^pi_/),
      status_reason: null,
      expires_at: null,
      paid_at: null,
      applied_at: null,
      reverted_at: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    expect(res.text).not.toContain(IDEMPOTENCY_KEY);
    expect(res.text).not.toContain(CHECKOUT_URL);
    expect((await s.api.get('/api/v1/payments/pay_nothere', { token })).status).toBe(404);
  });

  it("lists every payment oldest first, each with its client's email, without internals", async () => {
    const res = await s.api.get('/api/v1/payments?limit=200', { token });
    expect(res.body.items.map((p: { id: string }) => p.id)).toEqual(Object.values(ids).sort());
    for (const p of res.body.items as Array<{ client_id: string; client_email: string }>) expect(p.client_email).toBe(emails[p.client_id]);
    expect(res.text).not.toContain(IDEMPOTENCY_KEY);
  });

  it('filters by client_id, status, provider_id, subscription_id and plan_id (combinable)', async () => {
    expect(await list(`client_id=${a.client_id}`)).toEqual([ids.a1, ids.a2]);
    expect(await list(`client_id=${b.client_id}`)).toEqual([ids.b1, ids.b2, ids.mix]);
    expect(await list('status=pending')).toEqual([ids.b1]);
    expect(await list('status=canceled')).toEqual([ids.mix]);
    expect(await list(`provider_id=${a.provider_id}`)).toEqual([ids.a1, ids.a2]);
    expect(await list(`subscription_id=${a.subscription_id}`)).toEqual([ids.a1, ids.a2]);
    expect(await list(`plan_id=${a.plan_id}`)).toEqual([ids.a1, ids.a2, ids.mix]);
    expect(await list(`plan_id=${a.plan_id}&client_id=${b.client_id}`)).toEqual([ids.mix]);
    expect(await list(`client_id=${a.client_id}&status=refunded`)).toEqual([ids.a2]);
    expect(await list('client_id=cli_nobody')).toEqual([]);
    const bad = await s.api.get('/api/v1/payments?status=paid', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors['query.status']).toBeDefined();
  });

  it('walks many payments in pages without repeats or gaps', async () => {
    for (let i = 0; i < 30; i++) await payment(a, 'succeeded', i);
    const all = await list('');
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { status: number; body: { items: Array<{ id: string }>; next_cursor: string | null } } = await s.api.get(
        `/api/v1/payments?limit=8${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token },
      );
      expect(res.status).toBe(200);
      walked.push(...res.body.items.map((p) => p.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(walked).toEqual(all);
    expect(walked.length).toBe(35);
  });

  it('is read-only: a viewer may read; nobody may write (no such methods)', async () => {
    expect(await list('', viewerToken)).toContain(ids.a1);
    expect((await s.api.get(`/api/v1/payments/${ids.a1}`, { token: viewerToken })).status).toBe(200);
    const post = await s.api.post('/api/v1/payments', { amount: 1 }, { token });
    expect(post.status).toBe(405);
    expect((await s.api.patch(`/api/v1/payments/${ids.a1}`, { status: 'succeeded' }, { token })).status).toBe(405);
    expect((await s.api.delete(`/api/v1/payments/${ids.a1}`, { token })).status).toBe(405);
  });
});
