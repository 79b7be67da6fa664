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

const RFC3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const now = () => s.clock.now();

// ---- rows owned by other features, inserted directly
async function accessGroup(name = `group-${randomUUID()}`): Promise<string> {
  const id = newId('agr', now().getTime());
  await s.deps.db.insertInto('access_groups').values({ id, name, created_at: now(), updated_at: now() }).execute();
  return id;
}
async function client(): Promise<string> {
  const id = newId('cli', now().getTime());
  await s.deps.db
    .insertInto('clients')
    .values({
      id,
      email: `c-${randomUUID()}@example.com`,
      password_hash: null,
      email_verified_at: now(),
      status: 'active',
      note: null,
      created_at: now(),
      updated_at: now(),
    })
    .execute();
  return id;
}
async function provider(): Promise<string> {
  const id = newId('ppr', now().getTime());
  await s.deps.db
    .insertInto('payment_providers')
    .values({
      id,
      kind: 'manual',
      name: 'cash',
      enabled: true,
      config: JSON.stringify({ instructions: 'pay' }),
      secrets_enc: null,
      created_at: now(),
      updated_at: now(),
    })
    .execute();
  return id;
}
async function payment(planId: string): Promise<string> {
  const id = newId('pay', now().getTime());
  await s.deps.db
    .insertInto('payments')
    .values({
      id,
      client_id: await client(),
      plan_id: planId,
      provider_id: await provider(),
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
async function subscription(planId: string): Promise<string> {
  const id = newId('sub', now().getTime());
  await s.deps.db
    .insertInto('subscriptions')
    .values({
      id,
      client_id: await client(),
      status: 'active',
      traffic_limit_bytes: null,
      expires_at: null,
      period_started_at: now(),
      vless_uuid: randomUUID(),
      vmess_uuid: randomUUID(),
      trojan_password: 'x',
      shadowsocks_password: 'y',
      token_hash: randomUUID(),
      token_enc: 'z',
      credentials_rotated_at: null,
      plan_id: planId,
      note: null,
      created_at: now(),
      updated_at: now(),
    })
    .execute();
  return id;
}

const base = { name: 'Monthly 100 GB', price: 990, currency: 'EUR', duration_days: 30 };
const create = (body: Record<string, unknown>, t = token) => s.api.post('/api/v1/plans', body, { token: t });
const auditOf = (id: string) =>
  s.deps.db.selectFrom('audit_log').selectAll().where('entity_type', '=', 'plan').where('entity_id', '=', id).orderBy('id').execute();

describe('plans: create and read', () => {
  it('creates a plan with defaults (not archived, unlimited traffic, no groups) and reads it back', async () => {
    const res = await create(base);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ...base, traffic_limit_bytes: null, access_group_ids: [], archived: false });
    expect(res.body.id).toMatch(/^pln_[0-9a-z]{26}$/);
    expect(res.body.created_at).toMatch(RFC3339_UTC);
    expect(res.body.updated_at).toBe(res.body.created_at);
    const got = await s.api.get(`/api/v1/plans/${res.body.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('stores every field: traffic limit, access groups (sorted, duplicates collapsed), archived', async () => {
    const [g1, g2] = [await accessGroup(), await accessGroup()];
    const res = await create({ ...base, traffic_limit_bytes: 100 * 2 ** 30, access_group_ids: [g2, g1, g2], archived: true, price: 0 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ traffic_limit_bytes: 100 * 2 ** 30, access_group_ids: [g1, g2].sort(), archived: true, price: 0 });
    expect((await s.api.get(`/api/v1/plans/${res.body.id}`, { token })).body.access_group_ids).toEqual([g1, g2].sort());
  });

  it('an unknown plan is a 404 problem', async () => {
    const res = await s.api.get('/api/v1/plans/pln_nothere', { token });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('plans: validation per field (400 with errors[field])', () => {
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

  it('names each unknown access group by its position', async () => {
    const g = await accessGroup();
    const count = async () => (await s.deps.db.selectFrom('plans').select('id').execute()).length;
    const before = await count();
    const res = await create({ ...base, access_group_ids: [g, 'agr_missing', 'agr_gone'] });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({
      'access_group_ids.1': expect.stringContaining('agr_missing'),
      'access_group_ids.2': expect.any(String),
    });
    expect(await count()).toBe(before);
  });
});

describe('plans: PATCH merges', () => {
  it('updates only the fields sent; access_group_ids replaces the list; null traffic limit means unlimited', async () => {
    const [g1, g2, g3] = [await accessGroup(), await accessGroup(), await accessGroup()];
    const created = (await create({ ...base, traffic_limit_bytes: 1000, access_group_ids: [g1, g2] })).body;
    s.clock.advance(1000);
    const res = await s.api.patch(`/api/v1/plans/${created.id}`, { price: 1290, access_group_ids: [g3] }, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ...base, price: 1290, traffic_limit_bytes: 1000, access_group_ids: [g3], archived: false });
    expect(res.body.updated_at > created.updated_at).toBe(true);
    expect(res.body.created_at).toBe(created.created_at);
    const links = await s.deps.db.selectFrom('plan_access_groups').select('access_group_id').where('plan_id', '=', created.id).execute();
    expect(links.map((l) => l.access_group_id)).toEqual([g3]);

    const unlimited = await s.api.patch(`/api/v1/plans/${created.id}`, { traffic_limit_bytes: null, name: 'Renamed' }, { token });
    expect(unlimited.body).toMatchObject({ traffic_limit_bytes: null, name: 'Renamed', price: 1290, access_group_ids: [g3] });
    const cleared = await s.api.patch(`/api/v1/plans/${created.id}`, { access_group_ids: [] }, { token });
    expect(cleared.body.access_group_ids).toEqual([]);
    const empty = await s.api.patch(`/api/v1/plans/${created.id}`, {}, { token });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ name: 'Renamed', access_group_ids: [] });
  });

  it('validates each field it is sent, refuses unknown fields, and answers 404 for an unknown plan', async () => {
    const { id } = (await create(base)).body;
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

describe('plans: list', () => {
  it('walks every plan exactly once in pages, oldest first', async () => {
    for (let i = 0; i < 23; i++) expect((await create({ ...base, name: `walk ${i}` })).status).toBe(201);
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
    const archived = (await create({ ...base, archived: true })).body;
    const onSale = (await create(base)).body;
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
    const p = (await create({ ...base, access_group_ids: [g] })).body;
    const res = await s.api.get('/api/v1/plans?limit=200', { token });
    expect(res.body.items.find((i: { id: string }) => i.id === p.id).access_group_ids).toEqual([g]);
  });
});

describe('plans: delete and its 409 rules', () => {
  it('deletes an unreferenced plan with its group grants; a second delete is a 404', async () => {
    const g = await accessGroup();
    const { id } = (await create({ ...base, access_group_ids: [g] })).body;
    expect((await s.api.delete(`/api/v1/plans/${id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/plans/${id}`, { token })).status).toBe(404);
    expect(await s.deps.db.selectFrom('plan_access_groups').selectAll().where('plan_id', '=', id).execute()).toEqual([]);
    expect((await s.api.delete(`/api/v1/plans/${id}`, { token })).status).toBe(404);
  });

  it('refuses (409) while payments reference it, naming them in blocked_by and suggesting archiving', async () => {
    const { id } = (await create(base)).body;
    const [p1, p2] = [await payment(id), await payment(id)];
    const res = await s.api.delete(`/api/v1/plans/${id}`, { token });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('urn:svc:problem:conflict');
    expect(res.body.blocked_by).toEqual({ payments: [p1, p2].sort() });
    expect(res.body.detail).toMatch(/2 payments/);
    expect(res.body.detail).toMatch(/archive/);
    expect((await s.api.get(`/api/v1/plans/${id}`, { token })).status).toBe(200);
    // Archiving is the way out.
    expect((await s.api.patch(`/api/v1/plans/${id}`, { archived: true }, { token })).body.archived).toBe(true);
  });

  it('refuses (409) while subscriptions bought with it reference it', async () => {
    const { id } = (await create(base)).body;
    const sub = await subscription(id);
    const res = await s.api.delete(`/api/v1/plans/${id}`, { token });
    expect(res.status).toBe(409);
    expect(res.body.blocked_by).toEqual({ subscriptions: [sub] });
  });
});

describe('plans: roles, audit, node configuration', () => {
  it('a viewer reads plans but gets 403 on every write', async () => {
    const { id } = (await create(base)).body;
    expect((await s.api.get('/api/v1/plans', { token: viewerToken })).status).toBe(200);
    expect((await s.api.get(`/api/v1/plans/${id}`, { token: viewerToken })).status).toBe(200);
    expect((await create(base, viewerToken)).status).toBe(403);
    expect((await s.api.patch(`/api/v1/plans/${id}`, { price: 1 }, { token: viewerToken })).status).toBe(403);
    expect((await s.api.delete(`/api/v1/plans/${id}`, { token: viewerToken })).status).toBe(403);
    expect((await s.api.get(`/api/v1/plans/${id}`, { token })).body.price).toBe(base.price);
  });

  it('audits create, update and delete with the acting admin', async () => {
    const g = await accessGroup();
    const { id } = (await create({ ...base, access_group_ids: [g] })).body;
    await s.api.patch(`/api/v1/plans/${id}`, { price: 100, archived: true }, { token });
    await s.api.delete(`/api/v1/plans/${id}`, { token });
    const rows = await auditOf(id);
    expect(rows.map((r) => r.action)).toEqual(['plan.created', 'plan.updated', 'plan.deleted']);
    for (const r of rows) expect(r).toMatchObject({ actor_type: 'admin', actor_id: ownerId, entity_type: 'plan', entity_id: id });
    expect(rows[0]?.details).toMatchObject({ price: 990, currency: 'EUR', access_group_ids: [g] });
    expect(rows[1]?.details).toMatchObject({
      changed: ['price', 'archived'],
      price: { from: 990, to: 100 },
      archived: { from: false, to: true },
    });
    // Visible through the audit-log API as well.
    const api = await s.api.get(`/api/v1/audit-log?entity_type=plan&entity_id=${id}`, { token });
    expect(api.body.items).toHaveLength(3);
  });

  it('changes no node configuration: no desired_revision moves when a plan grants a served group', async () => {
    const t = now();
    const nodeId = newId('nod', t.getTime());
    await s.deps.db
      .insertInto('nodes')
      .values({ id: nodeId, name: `n-${randomUUID()}`, address: 'n.example.com', created_at: t, updated_at: t })
      .execute();
    const profileId = newId('prf', t.getTime());
    await s.deps.db
      .insertInto('inbound_profiles')
      .values({
        id: profileId,
        name: `p-${randomUUID()}`,
        protocol: 'vless',
        stream: JSON.stringify({ network: 'tcp', security: 'none' }),
        sniffing: JSON.stringify({ enabled: false, dest_override: [], route_only: false }),
        vless_flow: null,
        shadowsocks_method: null,
        reality_private_key_enc: null,
        certificate_id: null,
        created_at: t,
        updated_at: t,
      })
      .execute();
    const inboundId = newId('inb', t.getTime());
    await s.deps.db
      .insertInto('inbounds')
      .values({
        id: inboundId,
        node_id: nodeId,
        profile_id: profileId,
        tag: 'in-1',
        port: 443,
        listen: null,
        host: null,
        chain_id: null,
        created_at: t,
        updated_at: t,
      })
      .execute();
    const g = await accessGroup();
    await s.deps.db.insertInto('access_group_inbounds').values({ access_group_id: g, inbound_id: inboundId }).execute();
    const revisions = async () =>
      (await s.deps.db.selectFrom('nodes').select(['id', 'desired_revision']).orderBy('id').execute()).map(
        (r) => `${r.id}:${r.desired_revision}`,
      );
    const before = await revisions();
    const { id } = (await create({ ...base, access_group_ids: [g] })).body;
    await s.api.patch(`/api/v1/plans/${id}`, { access_group_ids: [], archived: true }, { token });
    await s.api.delete(`/api/v1/plans/${id}`, { token });
    expect(await revisions()).toEqual(before);
  });
});
