import SwaggerParser from '@apidevtools/swagger-parser';
import { pageAll } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';
import { captureMail, type MailCapture } from './mail-capture.ts';

/**
 * What a signed-in customer reads and does on /portal/v1 (spec 4.6): me, own subscriptions'
 * usage, link and rotation (another client's id is 404, exactly like a missing one), plans
 * (non-archived), payment methods (enabled), both paged like every list.
 */
let p: PortalTestServer;
let mail: MailCapture;

beforeAll(async () => {
  p = await startPortal({}, { rate_limits: { magic_link: { per_ip: { limit: 1000, window_seconds: 60 } } } });
  mail = await captureMail(p.s);
}, 60_000);
afterAll(async () => {
  await mail?.stop();
  await p?.stop();
});

const unique = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;

/** A client made by the admin, signed in by magic link. */
async function customer(): Promise<{ id: string; email: string; token: string }> {
  const c = (await p.post('/api/v1/clients', { email: unique('customer') })) as { id: string; email: string };
  await p.s.api.post('/portal/v1/auth/magic-link', { email: c.email });
  const pair = await p.s.api.post('/portal/v1/auth/callback', { token: await mail.tokenFor(c.email) });
  expect(pair.status, pair.text).toBe(200);
  return { ...c, token: pair.body.access_token };
}

/** GET a /sub link on this server (links name the configured public base URL). */
const fetchLink = (link: string) => fetch(`${p.s.url}${new URL(link).pathname}`);

const subscriptionFor = async (clientId: string, extra: Record<string, unknown> = {}) =>
  (await p.post('/api/v1/subscriptions', { client_id: clientId, access_group_ids: [], ...extra })) as { id: string; link: string };

describe('GET /portal/v1/me', () => {
  it('answers the client and only their subscriptions, with status, usage, expiry and limit; no admin note', async () => {
    const a = await customer();
    const b = await customer();
    const expires = new Date(p.s.clock.now().getTime() + 30 * 86_400_000).toISOString();
    const s1 = await subscriptionFor(a.id, {
      traffic_limit_bytes: 10_000_000,
      expires_at: expires,
      note: 'admin-only note: VIP, call before renewing',
    });
    await subscriptionFor(b.id);
    const me = await p.s.api.get('/portal/v1/me', { token: a.token });
    expect(me.status).toBe(200);
    expect(me.body.client).toEqual({
      id: a.id,
      email: a.email,
      status: 'active',
      email_verified_at: expect.any(String),
      has_password: false,
      created_at: expect.any(String),
    });
    expect(me.body.subscriptions).toHaveLength(1);
    expect(me.body.subscriptions[0]).toMatchObject({
      id: s1.id,
      status: 'active',
      used_bytes: 0,
      traffic_limit_bytes: 10_000_000,
      expires_at: expires,
    });
    // When the traffic count starts again: the renewal's next period, UTC (null for no_reset).
    const sub = me.body.subscriptions[0];
    const now = p.s.clock.now();
    const expected =
      sub.renewal === 'no_reset'
        ? null
        : sub.renewal === 'month'
          ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString()
          : expect.any(String);
    expect(sub.next_reset_at).toEqual(expected);
    // The random address may hold any letters: the note is looked for whole.
    expect(JSON.stringify(me.body)).not.toContain('admin-only note');
    expect(me.body.subscriptions[0]).not.toHaveProperty('link');
  });

  it('a client banned after signing in reads nothing more with a token still in its 15 minutes', async () => {
    const c = await customer();
    expect((await p.s.api.get('/portal/v1/me', { token: c.token })).status).toBe(200);
    expect((await p.s.api.patch(`/api/v1/clients/${c.id}`, { status: 'disabled' }, { token: p.token })).status).toBe(200);
    expect((await p.s.api.get('/portal/v1/me', { token: c.token })).status).toBe(401);
  });
});

describe('own subscriptions only (spec 4.6: another client’s id is 404)', () => {
  it('usage, link and rotation of another client’s subscription answer exactly like a missing one', async () => {
    const a = await customer();
    const b = await customer();
    const theirs = await subscriptionFor(b.id);
    for (const path of [`/portal/v1/subscriptions/${theirs.id}/usage`, `/portal/v1/subscriptions/${theirs.id}/link`]) {
      const res = await p.s.api.get(path, { token: a.token });
      const missing = await p.s.api.get(path.replace(theirs.id, 'sub_doesnotexist'), { token: a.token });
      expect(res.status).toBe(404);
      expect(missing.status).toBe(404);
      expect(res.body.title).toBe(missing.body.title);
    }
    const rotate = await p.s.api.post(`/portal/v1/subscriptions/${theirs.id}/rotate-credentials`, undefined, { token: a.token });
    expect(rotate.status).toBe(404);
    // Nothing rotated: B's link still serves.
    expect((await fetchLink(theirs.link)).status).toBe(200);
  });

  it('link and usage of one’s own subscription; rotation gives a new link and the old one stops at once', async () => {
    const a = await customer();
    const mine = await subscriptionFor(a.id);
    const link = await p.s.api.get(`/portal/v1/subscriptions/${mine.id}/link`, { token: a.token });
    expect(link.status).toBe(200);
    expect(link.body.url).toBe(mine.link);
    const usage = await p.s.api.get(`/portal/v1/subscriptions/${mine.id}/usage?granularity=day`, { token: a.token });
    expect(usage.status, usage.text).toBe(200);
    expect(usage.body).toMatchObject({ subscription_id: mine.id, granularity: 'day' });
    expect(usage.body.items.length).toBeGreaterThan(0);
    const bad = await p.s.api.get(`/portal/v1/subscriptions/${mine.id}/usage?granularity=year`, { token: a.token });
    expect(bad.status).toBe(400);

    const rotated = await p.s.api.post(`/portal/v1/subscriptions/${mine.id}/rotate-credentials`, undefined, { token: a.token });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.link).not.toBe(mine.link);
    expect(rotated.body.credentials_rotated_at).not.toBeNull();
    expect((await fetchLink(mine.link)).status).toBe(404);
    expect((await fetchLink(rotated.body.link)).status).toBe(200);
    const audit = await p.s.deps.db
      .selectFrom('audit_log')
      .select(['actor_type', 'actor_id'])
      .where('action', '=', 'subscription.credentials_rotated')
      .where('entity_id', '=', mine.id)
      .executeTakeFirstOrThrow();
    expect(audit).toEqual({ actor_type: 'client', actor_id: a.id });
  });
});

describe('GET /portal/v1/plans and /payment-methods', () => {
  it('plans: non-archived only, without the operator’s access groups; payment methods: enabled providers without settings', async () => {
    const a = await customer();
    const onSale = await p.post('/api/v1/plans', { name: `Monthly ${Math.random()}`, price: 990, currency: 'EUR', duration_days: 30 });
    const archived = await p.post('/api/v1/plans', { name: `Old ${Math.random()}`, price: 500, currency: 'EUR', duration_days: 30 });
    expect((await p.s.api.patch(`/api/v1/plans/${archived.id}`, { archived: true }, { token: p.token })).status).toBe(200);
    const plans = await p.s.api.get('/portal/v1/plans', { token: a.token });
    expect(plans.status).toBe(200);
    const ids = plans.body.items.map((x: { id: string }) => x.id);
    expect(ids).toContain(onSale.id);
    expect(ids).not.toContain(archived.id);
    expect(plans.body.items.find((x: { id: string }) => x.id === onSale.id)).toEqual({
      id: onSale.id,
      name: onSale.name,
      price: 990,
      currency: 'EUR',
      duration_days: 30,
      traffic_limit_bytes: null,
      device_limit: null,
      upload_bps: null,
      download_bps: null,
      description: null,
      renewal: 'no_reset',
    });

    const secret = `sk_test_${Math.random().toString(36).slice(2)}`;
    const on = await p.post('/api/v1/payment-providers', {
      kind: 'stripe',
      name: 'Card',
      enabled: true,
      config: { secret_key: secret, webhook_secret: 'whsec_x', publishable_key: 'pk_test_abc' },
    });
    const off = await p.post('/api/v1/payment-providers', {
      kind: 'stripe',
      name: 'Card (off)',
      enabled: false,
      config: { secret_key: secret, webhook_secret: 'whsec_y', publishable_key: 'pk_test_abc' },
    });
    const methods = await p.s.api.get('/portal/v1/payment-methods', { token: a.token });
    expect(methods.status).toBe(200);
    expect(methods.body.items).toContainEqual({ id: on.id, kind: 'stripe', name: 'Card' });
    expect(methods.body.items.map((m: { id: string }) => m.id)).not.toContain(off.id);
    expect(methods.text).not.toContain(secret);
    expect(methods.text).not.toContain('pk_test_abc');
    // Both need a client token.
    expect((await p.s.api.get('/portal/v1/plans')).status).toBe(401);
    expect((await p.s.api.get('/portal/v1/payment-methods')).status).toBe(401);
  });
});

describe('GET /portal/v1/plans and /payment-methods page like every list (spec 4.2, 8)', () => {
  const makePlan = (i: number | string) =>
    p.post('/api/v1/plans', { name: `Paged ${i} ${Math.random()}`, price: 100, currency: 'EUR', duration_days: 30 });
  const makeMethod = (i: number | string, enabled = true) =>
    p.post('/api/v1/payment-providers', { kind: 'manual', name: `Desk ${i}`, enabled, config: { instructions: 'Pay at the desk' } });

  it('plans: limit and cursor, next_cursor until the last page; by id, no repeats or gaps while plans are added between pages', async () => {
    const a = await customer();
    for (let i = 0; i < 5; i++) await makePlan(i);
    const archived = await makePlan('archived');
    expect((await p.s.api.patch(`/api/v1/plans/${archived.id}`, { archived: true }, { token: p.token })).status).toBe(200);
    const whole = await pageAll(p.s.api, '/portal/v1/plans', { limit: 200, token: a.token });
    expect(whole.length).toBeGreaterThanOrEqual(5);
    expect(whole).not.toContain(archived.id);
    expect([...whole].sort()).toEqual(whole);
    const first = await p.s.api.get('/portal/v1/plans?limit=2', { token: a.token });
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(2);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const added: string[] = [];
    const walked = await pageAll(p.s.api, '/portal/v1/plans', {
      limit: 2,
      token: a.token,
      between: async (n) => {
        added.push((await makePlan(`late${n}`)).id);
      },
    });
    // Every plan on sale when the walk began, once and in order; plans added meanwhile come after them.
    expect(walked.slice(0, whole.length)).toEqual(whole);
    expect(new Set(walked).size).toBe(walked.length);
    expect(walked.slice(whole.length).every((id) => added.includes(id))).toBe(true);
    const last = await p.s.api.get('/portal/v1/plans?limit=200', { token: a.token });
    expect(last.body.next_cursor).toBeNull();
  });

  it('payment methods: limit and cursor, enabled ones only, every one once', async () => {
    const a = await customer();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await makeMethod(i)).id);
    const off = await makeMethod('off', false);
    const whole = await pageAll(p.s.api, '/portal/v1/payment-methods', { limit: 200, token: a.token });
    const walked = await pageAll(p.s.api, '/portal/v1/payment-methods', { limit: 2, token: a.token });
    expect(walked).toEqual(whole);
    expect(walked.length).toBeGreaterThanOrEqual(6);
    expect(walked).toEqual(expect.arrayContaining(made));
    expect(walked).not.toContain(off.id);
    expect([...walked].sort()).toEqual(walked);
  });

  it('a bad limit or a cursor this API did not issue is a 400 problem naming the field', async () => {
    const a = await customer();
    await makePlan('x');
    await makePlan('y');
    const issued = (await p.s.api.get('/portal/v1/plans?limit=1', { token: a.token })).body.next_cursor as string;
    const [inner, tag] = issued.split('.') as [string, string];
    for (const path of ['/portal/v1/plans', '/portal/v1/payment-methods']) {
      for (const limit of ['0', '201', 'many']) {
        const res = await p.s.api.get(`${path}?limit=${limit}`, { token: a.token });
        expect(res.status, `${path} limit=${limit}`).toBe(400);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(Object.keys(res.body.errors)).toContain('query.limit');
      }
      for (const cursor of ['bm90LWEtY3Vyc29y', inner, `${inner}.${tag.slice(0, -1)}${tag.endsWith('A') ? 'B' : 'A'}`]) {
        const res = await p.s.api.get(`${path}?cursor=${encodeURIComponent(cursor)}`, { token: a.token });
        expect(res.status, `${path} cursor=${cursor}`).toBe(400);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(res.body.errors).toEqual({ 'query.cursor': 'not a cursor this API issued' });
      }
    }
  });
});

describe('GET /portal/v1/openapi.json', () => {
  it('describes every /portal/v1 route of spec 4.6 (OpenAPI 3.1), with the client scope on the protected ones', async () => {
    const doc = await p.s.api.get('/portal/v1/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(doc.body))).resolves.toBeTruthy();
    const ops = Object.entries(doc.body.paths as Record<string, Record<string, { 'x-scope'?: string }>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([m, op]) => ({ key: `${m.toUpperCase()} ${path}`, scope: op['x-scope'] })),
    );
    const keys = ops.map((o) => o.key);
    for (const k of [
      'GET /portal/v1/auth/methods',
      'GET /portal/v1/branding',
      'POST /portal/v1/auth/register',
      'POST /portal/v1/auth/login',
      'POST /portal/v1/auth/magic-link',
      'POST /portal/v1/auth/callback',
      'POST /portal/v1/auth/refresh',
      'GET /portal/v1/me',
      'GET /portal/v1/subscriptions/{id}/usage',
      'POST /portal/v1/subscriptions/{id}/rotate-credentials',
      'GET /portal/v1/subscriptions/{id}/link',
      'GET /portal/v1/devices',
      'DELETE /portal/v1/devices/{deviceId}',
      'GET /portal/v1/plans',
      'GET /portal/v1/payment-methods',
      'PUT /portal/v1/me/password',
      'GET /portal/v1/auth/oauth/{provider}/redirect',
      'GET /portal/v1/auth/oauth/{provider}/callback',
    ])
      expect(keys).toContain(k);
    expect(keys.every((k) => k.includes('/portal/v1/'))).toBe(true);
    for (const o of ops.filter((x) => ['GET /portal/v1/me', 'GET /portal/v1/plans'].includes(x.key))) expect(o.scope).toBe('client');
    // The portal's lists page like every list: limit and cursor in, next_cursor out.
    for (const path of ['/portal/v1/plans', '/portal/v1/payment-methods', '/portal/v1/payments']) {
      const op = doc.body.paths[path].get;
      expect(op.parameters.map((x: { name: string }) => x.name).sort(), path).toEqual(['cursor', 'limit']);
      const ref = op.responses['200'].content['application/json'].schema.$ref as string;
      const page = doc.body.components.schemas[ref.split('/').pop() as string];
      expect(Object.keys(page.properties).sort(), path).toEqual(['items', 'next_cursor']);
    }
    const docs = await fetch(`${p.s.url}/portal/v1/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('/portal/v1/docs/init.js');
    expect(await (await fetch(`${p.s.url}/portal/v1/docs/init.js`)).text()).toContain('/portal/v1/openapi.json');
  });

  it('gives every operation a unique operationId and declares the bearer scheme its operations name (issue 30.8)', async () => {
    const doc = (await p.s.api.get('/portal/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { operationId?: string; security?: Array<Record<string, string[]>> }>>;
      components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
    };
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(
      ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id)),
      JSON.stringify(ids),
    ).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const named = Object.values(doc.paths).flatMap((item) =>
      Object.values(item).flatMap((op) => (op.security ?? []).flatMap((r) => Object.keys(r))),
    );
    for (const scheme of new Set(named)) expect(doc.components.securitySchemes, scheme).toHaveProperty(scheme);
  });
});
