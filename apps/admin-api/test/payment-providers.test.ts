import { randomUUID } from 'node:crypto';
import { newId, withActor } from '@svc/domain';
import { adminWithRole, type Fixtures, fixtures, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let viewerToken: string;
let make: Fixtures;
beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
  viewerToken = (await adminWithRole(s, token, 'viewer')).access_token;
  make = fixtures(withActor(s.deps, TEST_OWNER));
});

// HTTP concerns of /payment-providers: status codes, problem documents, field errors (the
// kind's settings included), that no response carries a secret, pages and filters, roles. The
// rules (sealing, the kinds' settings, enabling, merges, references, audit) are proven on the
// use cases in packages/domain-tests/test/billing.
afterAll(() => s.stop());

const now = () => s.clock.now();
const SECRET_KEY = `sk_test_${randomUUID().replaceAll('-', '')}`;
const WEBHOOK_SECRET = `whsec_${randomUUID().replaceAll('-', '')}`;
const stripe = {
  kind: 'stripe',
  name: 'Stripe',
  config: { secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET, publishable_key: 'pk_test_abc' },
};
const create = (body: Record<string, unknown>, t = token) => s.api.post('/api/v1/payment-providers', body, { token: t });
const patch = (id: string, body: Record<string, unknown>, t = token) => s.api.patch(`/api/v1/payment-providers/${id}`, body, { token: t });

/** A payment, as checkout will write it (payments have no use case yet). */
async function payment(providerId: string): Promise<string> {
  const t = now();
  const id = newId('pay', t.getTime());
  await s.deps.db
    .insertInto('payments')
    .values({
      id,
      client_id: (await make.client()).id,
      plan_id: (await make.plan()).id,
      provider_id: providerId,
      subscription_id: null,
      amount: 100,
      currency: 'EUR',
      status: 'pending',
      provider_payment_id: null,
      idempotency_key: null,
      checkout_url: null,
      created_at: t,
      updated_at: t,
    })
    .execute();
  return id;
}

describe('POST /payment-providers and GET /payment-providers/{id}', () => {
  it('answers 201 with the provider: public settings shown, secrets only named; GET answers the same', async () => {
    const res = await create(stripe);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      kind: 'stripe',
      enabled: false,
      config: { publishable_key: 'pk_test_abc' },
      secrets_set: ['secret_key', 'webhook_secret'],
    });
    const got = await s.api.get(`/api/v1/payment-providers/${res.body.id}`, { token });
    expect(got.body).toEqual(res.body);
  });

  it('no response carries a secret: not create, read, list, update or the audit log', async () => {
    const created = await create(stripe);
    const responses = [
      created,
      await s.api.get(`/api/v1/payment-providers/${created.body.id}`, { token }),
      await s.api.get('/api/v1/payment-providers?limit=200', { token }),
      await patch(created.body.id, { name: 'Renamed', enabled: true }),
      await s.api.get(`/api/v1/audit-log?entity_id=${created.body.id}`, { token }),
    ];
    for (const r of responses) {
      expect(r.status).toBeLessThan(300);
      expect(r.text).not.toContain(SECRET_KEY);
      expect(r.text).not.toContain(WEBHOOK_SECRET);
    }
  });

  it('an unknown provider is a 404 problem', async () => {
    expect((await s.api.get('/api/v1/payment-providers/ppr_nothere', { token })).status).toBe(404);
  });
});

describe('POST /payment-providers: a bad body is a 400 naming the field', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown kind', { ...stripe, kind: 'paypal' }, 'kind'],
    ['a missing kind', { name: 'x' }, 'kind'],
    ['an empty name', { ...stripe, name: ' ' }, 'name'],
    ['enabled not a boolean', { ...stripe, enabled: 'yes' }, 'enabled'],
    ['a secret_key without sk_', { ...stripe, config: { secret_key: 'pk_live_x' } }, 'config.secret_key'],
    ['a setting the kind does not have', { ...stripe, config: { api_key: 'x' } }, 'config.api_key'],
    ['a setting that is not a string', { ...stripe, config: { secret_key: 42 } }, 'config.secret_key'],
    ['manual without instructions', { kind: 'manual', name: 'm', config: {} }, 'config.instructions'],
    ['an unknown top-level field', { ...stripe, secrets: {} }, '(body)'],
  ];
  for (const [rule, body, field] of cases) {
    it(`refuses ${rule}`, async () => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(Object.keys(res.body.errors)).toContain(field);
    });
  }

  it('enabled without its required secrets is a 409 conflict problem naming them', async () => {
    const res = await create({ kind: 'stripe', name: 'x', enabled: true, config: { secret_key: SECRET_KEY } });
    expect(res.status).toBe(409);
    expect(res.body.missing_secrets).toEqual(['webhook_secret']);
    expect(res.body.detail).toContain('webhook_secret');
    expect(res.body.errors).toEqual({ 'config.webhook_secret': expect.any(String) });
  });
});

describe('PATCH /payment-providers/{id}', () => {
  it('answers 200 with the merged provider', async () => {
    const { id } = (await create(stripe)).body;
    const res = await patch(id, { name: 'Renamed', config: { publishable_key: 'pk_live_new' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id,
      name: 'Renamed',
      config: { publishable_key: 'pk_live_new' },
      secrets_set: ['secret_key', 'webhook_secret'],
    });
  });

  it('enabling without the required secrets is a 409 problem with missing_secrets', async () => {
    const { id } = (await create({ kind: 'stripe', name: 'x' })).body;
    const res = await patch(id, { enabled: true });
    expect(res.status).toBe(409);
    expect(res.body.missing_secrets).toEqual(['secret_key', 'webhook_secret']);
  });

  it('refuses invalid settings, a kind change, unknown fields and bad values naming each; 404 for an unknown provider', async () => {
    const { id } = (await create(stripe)).body;
    for (const [body, field] of [
      [{ config: { secret_key: 'nope' } }, 'config.secret_key'],
      [{ config: { instructions: 'x' } }, 'config.instructions'],
      [{ config: { webhook_secret: 1 } }, 'config.webhook_secret'],
      [{ kind: 'manual' }, '(body)'],
      [{ name: '' }, 'name'],
      [{ enabled: null }, 'enabled'],
    ] as const) {
      const res = await patch(id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
    expect((await patch('ppr_nothere', { name: 'x' })).status).toBe(404);
  });
});

describe('GET /payment-providers', () => {
  it('walks every provider exactly once in pages', async () => {
    for (let i = 0; i < 12; i++) await make.paymentProvider({ name: `walk ${i}` });
    const all = (await s.api.get('/api/v1/payment-providers?limit=200', { token })).body.items.map((p: { id: string }) => p.id);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { items: Array<{ id: string }>; next_cursor: string | null } } = await s.api.get(
        `/api/v1/payment-providers?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token },
      );
      ids.push(...res.body.items.map((p) => p.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(ids).toEqual(all);
    expect(ids.length).toBeGreaterThanOrEqual(12);
    expect([...ids].sort()).toEqual(ids);
  });

  it('filters by kind and by enabled; other values are refused', async () => {
    await make.paymentProvider({ kind: 'stripe', enabled: true, config: stripe.config });
    await make.paymentProvider({ kind: 'manual' });
    const stripes = await s.api.get('/api/v1/payment-providers?kind=stripe&limit=200', { token });
    expect(stripes.body.items.length).toBeGreaterThan(0);
    expect(stripes.body.items.every((p: { kind: string }) => p.kind === 'stripe')).toBe(true);
    const manuals = await s.api.get('/api/v1/payment-providers?kind=manual&limit=200', { token });
    expect(manuals.body.items.length).toBeGreaterThan(0);
    expect(manuals.body.items.every((p: { kind: string }) => p.kind === 'manual')).toBe(true);
    const on = await s.api.get('/api/v1/payment-providers?enabled=true&limit=200', { token });
    const off = await s.api.get('/api/v1/payment-providers?enabled=false&limit=200', { token });
    expect(on.body.items.length).toBeGreaterThan(0);
    expect(off.body.items.length).toBeGreaterThan(0);
    expect(on.body.items.every((p: { enabled: boolean }) => p.enabled)).toBe(true);
    expect(off.body.items.every((p: { enabled: boolean }) => !p.enabled)).toBe(true);
    expect((await s.api.get('/api/v1/payment-providers?kind=paypal', { token })).status).toBe(400);
    expect((await s.api.get('/api/v1/payment-providers?enabled=1', { token })).status).toBe(400);
  });
});

describe('DELETE /payment-providers/{id} and roles', () => {
  it('answers 204, then 404; a 409 problem naming the payments that reference it', async () => {
    const free = (await make.paymentProvider()).id;
    expect((await s.api.delete(`/api/v1/payment-providers/${free}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/payment-providers/${free}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/payment-providers/${free}`, { token })).status).toBe(404);

    const used = (await make.paymentProvider()).id;
    const pay = await payment(used);
    const res = await s.api.delete(`/api/v1/payment-providers/${used}`, { token });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('urn:svc:problem:conflict');
    expect(res.body.blocked_by).toEqual({ payments: [pay] });
  });

  it('a viewer reads providers but gets 403 on every write', async () => {
    const { id } = await make.paymentProvider();
    expect((await s.api.get('/api/v1/payment-providers', { token: viewerToken })).status).toBe(200);
    expect((await s.api.get(`/api/v1/payment-providers/${id}`, { token: viewerToken })).status).toBe(200);
    expect((await create(stripe, viewerToken)).status).toBe(403);
    expect((await patch(id, { enabled: true }, viewerToken)).status).toBe(403);
    expect((await s.api.delete(`/api/v1/payment-providers/${id}`, { token: viewerToken })).status).toBe(403);
  });

  it('a change over HTTP is audited as the admin whose token made it', async () => {
    const { id } = (await create(stripe)).body;
    const [entry] = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', id).execute();
    expect(entry).toMatchObject({ action: 'payment_provider.created', actor_type: 'admin', actor_id: ownerId });
  });
});
