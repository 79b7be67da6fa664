import { randomUUID } from 'node:crypto';
import { newId, withActor } from '@svc/domain';
import { adminWithRole, type Fixtures, fixtures, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// HTTP concerns of /plans: status codes, problem documents, field errors, pages and filters,
// roles. The rules (defaults, merges, references, audit, no node revision) are proven on the
// use cases in packages/domain-tests/test/billing.

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
afterAll(() => s.stop());

const RFC3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const now = () => s.clock.now();

async function accessGroup(): Promise<string> {
  const res = await s.api.post('/api/v1/access-groups', { name: `group-${randomUUID()}` }, { token });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}
/** A payment, as checkout will write it (payments have no use case yet). */
async function payment(planId: string): Promise<string> {
  const id = newId('pay', now().getTime());
  await s.deps.db
    .insertInto('payments')
    .values({
      id,
      client_id: (await make.client()).id,
      plan_id: planId,
      provider_id: (await make.paymentProvider()).id,
      subscription_id: null,
      amount: 500,
      currency: 'EUR',
      status: 'succeeded',
      provider_payment_id: null,
      idempotency_key: null,
      checkout_url: null,
      created_at: now(),
      updated_at: now(),
    })
    .execute();
  return id;
}

const base = { name: 'Monthly 100 GB', price: 990, currency: 'EUR', duration_days: 30 };
const create = (body: Record<string, unknown>, t = token) => s.api.post('/api/v1/plans', body, { token: t });

describe('POST /plans and GET /plans/{id}', () => {
  it('answers 201 with the plan, which GET answers the same', async () => {
    const res = await create(base);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      ...base,
      traffic_limit_bytes: null,
      device_limit: null,
      upload_bps: null,
      download_bps: null,
      access_group_ids: [],
      archived: false,
    });
    expect(res.body.created_at).toMatch(RFC3339_UTC);
    const got = await s.api.get(`/api/v1/plans/${res.body.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('takes the live limits a subscription bought with it gets (issue 36), and PATCH changes them', async () => {
    const res = await create({ ...base, device_limit: 3, upload_bps: 2_000_000, download_bps: 10_000_000 });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ device_limit: 3, upload_bps: 2_000_000, download_bps: 10_000_000 });
    const patched = await s.api.patch(`/api/v1/plans/${res.body.id}`, { download_bps: null }, { token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ device_limit: 3, upload_bps: 2_000_000, download_bps: null });
  });

  it('an unknown plan is a 404 problem', async () => {
    const res = await s.api.get('/api/v1/plans/pln_nothere', { token });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('POST /plans: a bad body is a 400 validation problem naming the field', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['name empty', { ...base, name: '  ' }, 'name'],
    ['name missing', { ...base, name: undefined }, 'name'],
    ['price negative', { ...base, price: -1 }, 'price'],
    ['price fractional', { ...base, price: 9.5 }, 'price'],
    ['price as string', { ...base, price: '990' }, 'price'],
    ['currency lower case', { ...base, currency: 'eur' }, 'currency'],
    ['currency four letters', { ...base, currency: 'EURO' }, 'currency'],
    ['currency not ISO 4217', { ...base, currency: 'QQQ' }, 'currency'],
    ['duration_days zero', { ...base, duration_days: 0 }, 'duration_days'],
    ['duration_days fractional', { ...base, duration_days: 1.5 }, 'duration_days'],
    ['traffic_limit_bytes negative', { ...base, traffic_limit_bytes: -1 }, 'traffic_limit_bytes'],
    ['device_limit zero', { ...base, device_limit: 0 }, 'device_limit'],
    ['device_limit over 1000', { ...base, device_limit: 1001 }, 'device_limit'],
    ['upload_bps under 8,000', { ...base, upload_bps: 7_999 }, 'upload_bps'],
    ['download_bps over 100 Gbit/s', { ...base, download_bps: 100_000_000_001 }, 'download_bps'],
    ['archived not a boolean', { ...base, archived: 'yes' }, 'archived'],
    ['access_group_ids not an array', { ...base, access_group_ids: 'agr_x' }, 'access_group_ids'],
    ['an unknown field', { ...base, colour: 'red' }, '(body)'],
  ];
  for (const [rule, body, field] of cases) {
    it(`refuses ${rule}`, async () => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.type).toBe('urn:svc:problem:validation');
      expect(Object.keys(res.body.errors)).toContain(field);
    });
  }

  it('an unknown access group is named by its position', async () => {
    const res = await create({ ...base, access_group_ids: [await accessGroup(), 'agr_missing'] });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ 'access_group_ids.1': expect.stringContaining('agr_missing') });
  });
});

describe('PATCH /plans/{id}', () => {
  it('answers 200 with the merged plan', async () => {
    const created = await make.plan({ ...base });
    const res = await s.api.patch(`/api/v1/plans/${created.id}`, { price: 1290 }, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ...base, id: created.id, price: 1290 });
  });

  it('a bad body is a 400 naming each field; an unknown plan is a 404', async () => {
    const { id } = await make.plan(base);
    for (const [body, field] of [
      [{ price: -5 }, 'price'],
      [{ currency: 'usd' }, 'currency'],
      [{ duration_days: -1 }, 'duration_days'],
      [{ name: '' }, 'name'],
      [{ archived: null }, 'archived'],
      [{ access_group_ids: ['agr_unknown'] }, 'access_group_ids.0'],
      [{ id: 'pln_other' }, '(body)'],
    ] as const) {
      const res = await s.api.patch(`/api/v1/plans/${id}`, body, { token });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
    expect((await s.api.get(`/api/v1/plans/${id}`, { token })).body).toMatchObject(base);
    expect((await s.api.patch('/api/v1/plans/pln_nothere', { price: 1 }, { token })).status).toBe(404);
  });
});

describe('GET /plans', () => {
  it('walks every plan exactly once in pages, oldest first; a cursor it did not issue is a 400', async () => {
    for (let i = 0; i < 23; i++) await make.plan({ name: `walk ${i}` });
    const all = await s.api.get('/api/v1/plans?limit=200', { token });
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let n = 0; n < 50; n++) {
      const res: { status: number; body: { items: Array<{ id: string }>; next_cursor: string | null } } = await s.api.get(
        `/api/v1/plans?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token },
      );
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(7);
      ids.push(...res.body.items.map((p) => p.id));
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    expect(ids).toEqual(all.body.items.map((p: { id: string }) => p.id));
    expect(ids.length).toBeGreaterThanOrEqual(23);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect((await s.api.get('/api/v1/plans?cursor=garbage', { token })).status).toBe(400);
  });

  it('filters by archived=true and archived=false; other values are refused', async () => {
    const archived = await make.plan({ archived: true });
    const onSale = await make.plan();
    const yes = await s.api.get('/api/v1/plans?archived=true&limit=200', { token });
    const no = await s.api.get('/api/v1/plans?archived=false&limit=200', { token });
    expect(yes.body.items.every((p: { archived: boolean }) => p.archived)).toBe(true);
    expect(no.body.items.every((p: { archived: boolean }) => !p.archived)).toBe(true);
    expect(yes.body.items.map((p: { id: string }) => p.id)).toContain(archived.id);
    expect(no.body.items.map((p: { id: string }) => p.id)).toContain(onSale.id);
    const bad = await s.api.get('/api/v1/plans?archived=yes', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors['query.archived']).toBeDefined();
  });

  it('list items carry their access groups', async () => {
    const g = await accessGroup();
    const p = await make.plan({ access_group_ids: [g] });
    const res = await s.api.get('/api/v1/plans?limit=200', { token });
    expect(res.body.items.find((i: { id: string }) => i.id === p.id).access_group_ids).toEqual([g]);
  });
});

describe('DELETE /plans/{id}', () => {
  it('answers 204, then 404', async () => {
    const { id } = await make.plan();
    expect((await s.api.delete(`/api/v1/plans/${id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/plans/${id}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/plans/${id}`, { token })).status).toBe(404);
  });

  it('is a 409 conflict problem while payments reference the plan, with blocked_by and the hint to archive', async () => {
    const { id } = await make.plan();
    const pay = await payment(id);
    const res = await s.api.delete(`/api/v1/plans/${id}`, { token });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('urn:svc:problem:conflict');
    expect(res.body.blocked_by).toEqual({ payments: [pay] });
    expect(res.body.detail).toMatch(/archive/);
  });
});

describe('plans: roles and audit', () => {
  it('a viewer reads plans but gets 403 on every write', async () => {
    const { id } = await make.plan(base);
    expect((await s.api.get('/api/v1/plans', { token: viewerToken })).status).toBe(200);
    expect((await s.api.get(`/api/v1/plans/${id}`, { token: viewerToken })).status).toBe(200);
    expect((await create(base, viewerToken)).status).toBe(403);
    expect((await s.api.patch(`/api/v1/plans/${id}`, { price: 1 }, { token: viewerToken })).status).toBe(403);
    expect((await s.api.delete(`/api/v1/plans/${id}`, { token: viewerToken })).status).toBe(403);
    expect((await s.api.get(`/api/v1/plans/${id}`, { token })).body.price).toBe(base.price);
  });

  it('changes over HTTP are audited as the admin whose token made them, and the audit-log API shows them', async () => {
    const { id } = (await create(base)).body;
    await s.api.patch(`/api/v1/plans/${id}`, { archived: true }, { token });
    await s.api.delete(`/api/v1/plans/${id}`, { token });
    const res = await s.api.get(`/api/v1/audit-log?entity_type=plan&entity_id=${id}`, { token });
    expect(res.body.items).toHaveLength(3);
    for (const entry of res.body.items) expect(entry).toMatchObject({ actor_type: 'admin', actor_id: ownerId });
  });
});
