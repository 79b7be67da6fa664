import { randomUUID } from 'node:crypto';
import { newId } from '@svc/domain';
import { adminWithRole, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let viewerToken: string;
beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
  viewerToken = (await adminWithRole(s, token, 'viewer')).access_token;
});
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
const stored = (id: string) => s.deps.db.selectFrom('payment_providers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function payment(providerId: string): Promise<string> {
  const t = now();
  const clientId = newId('cli', t.getTime());
  await s.deps.db
    .insertInto('clients')
    .values({
      id: clientId,
      email: `c-${randomUUID()}@example.com`,
      password_hash: null,
      email_verified_at: t,
      status: 'active',
      note: null,
      created_at: t,
      updated_at: t,
    })
    .execute();
  const planId = newId('pln', t.getTime());
  await s.deps.db
    .insertInto('plans')
    .values({
      id: planId,
      name: 'p',
      price: 100,
      currency: 'EUR',
      duration_days: 30,
      traffic_limit_bytes: null,
      created_at: t,
      updated_at: t,
    })
    .execute();
  const id = newId('pay', t.getTime());
  await s.deps.db
    .insertInto('payments')
    .values({
      id,
      client_id: clientId,
      plan_id: planId,
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

describe('payment providers: create and read; secrets are write-only', () => {
  it('creates a stripe provider disabled by default: public config shown, secrets only named', async () => {
    const res = await create(stripe);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^ppr_[0-9a-z]{26}$/),
      kind: 'stripe',
      name: 'Stripe',
      enabled: false,
      config: { publishable_key: 'pk_test_abc' },
      secrets_set: ['secret_key', 'webhook_secret'],
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const got = await s.api.get(`/api/v1/payment-providers/${res.body.id}`, { token });
    expect(got.body).toEqual(res.body);
  });

  it('never returns a secret: not on create, read, list or update', async () => {
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

  it('stores secrets only sealed (secrets_enc), which the installation key opens', async () => {
    const { id } = (await create(stripe)).body;
    const row = await stored(id);
    expect(JSON.stringify(row.config)).not.toContain(SECRET_KEY);
    expect(row.config).toEqual({ publishable_key: 'pk_test_abc' });
    expect(row.secrets_enc).not.toBeNull();
    expect(row.secrets_enc).not.toContain(SECRET_KEY);
    expect(row.secrets_enc).not.toContain(WEBHOOK_SECRET);
    expect(JSON.parse(s.deps.secrets.open(row.secrets_enc as string))).toEqual({ secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET });
  });

  it('creates a manual provider (public instructions, no secrets) enabled at once', async () => {
    const res = await create({ kind: 'manual', name: 'Bank transfer', enabled: true, config: { instructions: 'IBAN DE00 …' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ enabled: true, config: { instructions: 'IBAN DE00 …' }, secrets_set: [] });
    expect((await stored(res.body.id)).secrets_enc).toBeNull();
  });

  it('a provider may be created without its secrets while disabled', async () => {
    const res = await create({ kind: 'stripe', name: 'later' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ enabled: false, config: {}, secrets_set: [] });
  });

  it('an unknown provider is a 404 problem', async () => {
    expect((await s.api.get('/api/v1/payment-providers/ppr_nothere', { token })).status).toBe(404);
  });
});

describe('payment providers: validation per field', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown kind', { ...stripe, kind: 'paypal' }, 'kind'],
    ['a missing kind', { name: 'x' }, 'kind'],
    ['an empty name', { ...stripe, name: ' ' }, 'name'],
    ['enabled not a boolean', { ...stripe, enabled: 'yes' }, 'enabled'],
    ['a secret_key without sk_', { ...stripe, config: { secret_key: 'pk_live_x' } }, 'config.secret_key'],
    ['a webhook_secret without whsec_', { ...stripe, config: { webhook_secret: 'abc' } }, 'config.webhook_secret'],
    ['a secret with whitespace', { ...stripe, config: { secret_key: 'sk_live x' } }, 'config.secret_key'],
    ['a publishable_key without pk_', { ...stripe, config: { publishable_key: 'sk_live_x' } }, 'config.publishable_key'],
    ['a setting the kind does not have', { ...stripe, config: { api_key: 'x' } }, 'config.api_key'],
    ['a setting that is not a string', { ...stripe, config: { secret_key: 42 } }, 'config.secret_key'],
    ['null on create', { ...stripe, config: { secret_key: null } }, 'config.secret_key'],
    ['manual without instructions', { kind: 'manual', name: 'm', config: {} }, 'config.instructions'],
    ['manual with a stripe setting', { kind: 'manual', name: 'm', config: { instructions: 'x', secret_key: 'sk_x' } }, 'config.secret_key'],
    ['an unknown top-level field', { ...stripe, secrets: {} }, '(body)'],
  ];
  for (const [rule, body, field] of cases) {
    it(`refuses ${rule}`, async () => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.errors)).toContain(field);
    });
  }

  it('refuses (409) creating it enabled without its required secrets, naming them', async () => {
    const res = await create({ kind: 'stripe', name: 'x', enabled: true, config: { secret_key: SECRET_KEY } });
    expect(res.status).toBe(409);
    expect(res.body.missing_secrets).toEqual(['webhook_secret']);
    expect(res.body.detail).toContain('webhook_secret');
    expect(res.body.errors).toEqual({ 'config.webhook_secret': expect.any(String) });
  });
});

describe('payment providers: PATCH merges, config field by field', () => {
  it('sets and replaces single settings; others are untouched', async () => {
    const { id } = (await create(stripe)).body;
    const newKey = `sk_live_${randomUUID()}`;
    const res = await patch(id, { config: { secret_key: newKey, publishable_key: 'pk_live_new' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Stripe', enabled: false, config: { publishable_key: 'pk_live_new' } });
    expect(res.body.secrets_set).toEqual(['secret_key', 'webhook_secret']);
    expect(res.text).not.toContain(newKey);
    const row = await stored(id);
    expect(JSON.parse(s.deps.secrets.open(row.secrets_enc as string))).toEqual({ secret_key: newKey, webhook_secret: WEBHOOK_SECRET });
  });

  it('null removes a secret or an optional public setting', async () => {
    const { id } = (await create(stripe)).body;
    const res = await patch(id, { config: { webhook_secret: null, publishable_key: null } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ config: {}, secrets_set: ['secret_key'] });
    expect(JSON.parse(s.deps.secrets.open((await stored(id)).secrets_enc as string))).toEqual({ secret_key: SECRET_KEY });
    const none = await patch(id, { config: { secret_key: null } });
    expect(none.body.secrets_set).toEqual([]);
    expect((await stored(id)).secrets_enc).toBeNull();
  });

  it('a required public setting can be changed but not removed', async () => {
    const { id } = (await create({ kind: 'manual', name: 'm', config: { instructions: 'old' } })).body;
    expect((await patch(id, { config: { instructions: 'new' } })).body.config).toEqual({ instructions: 'new' });
    const res = await patch(id, { config: { instructions: null } });
    expect(res.status).toBe(400);
    expect(res.body.errors['config.instructions']).toBeDefined();
  });

  it('enabling needs every required secret: 409 naming the missing ones, then allowed once they are set', async () => {
    const { id } = (await create({ kind: 'stripe', name: 'x' })).body;
    const refused = await patch(id, { enabled: true });
    expect(refused.status).toBe(409);
    expect(refused.body.missing_secrets).toEqual(['secret_key', 'webhook_secret']);
    expect(refused.body.detail).toMatch(/secret_key, webhook_secret/);
    expect((await stored(id)).enabled).toBe(false);
    const ok = await patch(id, { enabled: true, config: { secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET } });
    expect(ok.status).toBe(200);
    expect(ok.body.enabled).toBe(true);
  });

  it('removing a required secret of an enabled provider is refused (409)', async () => {
    const { id } = (await create({ ...stripe, enabled: true })).body;
    const res = await patch(id, { config: { secret_key: null } });
    expect(res.status).toBe(409);
    expect(res.body.missing_secrets).toEqual(['secret_key']);
    expect((await patch(id, { enabled: false, config: { secret_key: null } })).status).toBe(200);
  });

  it('refuses invalid settings, a kind change, unknown fields, and answers 404 for an unknown provider', async () => {
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
    expect(JSON.parse(s.deps.secrets.open((await stored(id)).secrets_enc as string)).secret_key).toBe(SECRET_KEY);
    expect((await patch('ppr_nothere', { name: 'x' })).status).toBe(404);
  });
});

describe('payment providers: list', () => {
  it('walks every provider exactly once in pages', async () => {
    for (let i = 0; i < 12; i++) await create({ kind: 'manual', name: `walk ${i}`, config: { instructions: 'x' } });
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

  it('filters by kind and by enabled', async () => {
    await create({ ...stripe, enabled: true });
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

describe('payment providers: delete, roles, audit', () => {
  it('deletes an unreferenced provider; refuses (409) while payments reference it, naming them', async () => {
    const free = (await create(stripe)).body.id;
    expect((await s.api.delete(`/api/v1/payment-providers/${free}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/payment-providers/${free}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/payment-providers/${free}`, { token })).status).toBe(404);

    const used = (await create(stripe)).body.id;
    const pay = await payment(used);
    const res = await s.api.delete(`/api/v1/payment-providers/${used}`, { token });
    expect(res.status).toBe(409);
    expect(res.body.blocked_by).toEqual({ payments: [pay] });
    expect(res.body.detail).toMatch(/1 payment\b/);
    expect((await s.api.get(`/api/v1/payment-providers/${used}`, { token })).status).toBe(200);
  });

  it('a viewer reads providers but gets 403 on every write', async () => {
    const { id } = (await create(stripe)).body;
    expect((await s.api.get('/api/v1/payment-providers', { token: viewerToken })).status).toBe(200);
    expect((await s.api.get(`/api/v1/payment-providers/${id}`, { token: viewerToken })).status).toBe(200);
    expect((await create(stripe, viewerToken)).status).toBe(403);
    expect((await patch(id, { enabled: true }, viewerToken)).status).toBe(403);
    expect((await s.api.delete(`/api/v1/payment-providers/${id}`, { token: viewerToken })).status).toBe(403);
  });

  it('audits create, update and delete with names only, never secret values', async () => {
    const { id } = (await create(stripe)).body;
    await patch(id, { enabled: true, config: { secret_key: SECRET_KEY.replace('sk_test_', 'sk_live_') } });
    await s.api.delete(`/api/v1/payment-providers/${id}`, { token });
    const rows = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', id).orderBy('id').execute();
    expect(rows.map((r) => r.action)).toEqual(['payment_provider.created', 'payment_provider.updated', 'payment_provider.deleted']);
    for (const r of rows) expect(r).toMatchObject({ actor_type: 'admin', actor_id: ownerId, entity_type: 'payment_provider' });
    expect(rows[0]?.details).toMatchObject({ kind: 'stripe', secrets_set: ['secret_key', 'webhook_secret'] });
    expect(rows[1]?.details).toMatchObject({ enabled: { from: false, to: true }, secrets_changed: ['secret_key'] });
    expect(JSON.stringify(rows)).not.toMatch(/sk_(test|live)_|whsec_/);
  });
});
