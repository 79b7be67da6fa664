import { randomUUID } from 'node:crypto';
import { newId } from '@svc/domain';
import { adminWithRole, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let profile: string;

let seq = 0;
const uniq = (p: string) => `${p}-${++seq}`;

async function insertNode(name = uniq('node')): Promise<string> {
  const now = s.clock.now();
  const id = newId('nod', now.getTime());
  await s.deps.db
    .insertInto('nodes')
    .values({ id, name, address: `${name}.example.net`, created_at: now, updated_at: now })
    .execute();
  return id;
}
let port = 10000;
async function inbound(node: string): Promise<string> {
  const res = await s.api.post('/api/v1/inbounds', { node_id: node, profile_id: profile, port: port++ }, { token });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}
/** A subscription granted `groupId`, as the subscriptions feature stores it. */
async function insertSubscription(groupId: string): Promise<string> {
  const now = s.clock.now();
  const clientId = newId('cli', now.getTime());
  await s.deps.db
    .insertInto('clients')
    .values({
      id: clientId,
      email: `${uniq('c')}@example.com`,
      password_hash: null,
      email_verified_at: now,
      status: 'active',
      note: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const id = newId('sub', now.getTime());
  await s.deps.db
    .insertInto('subscriptions')
    .values({
      id,
      client_id: clientId,
      status: 'active',
      traffic_limit_bytes: null,
      expires_at: null,
      period_started_at: now,
      vless_uuid: randomUUID(),
      vmess_uuid: randomUUID(),
      trojan_password: 'p',
      shadowsocks_password: 'p',
      token_hash: randomUUID(),
      token_enc: 'x',
      credentials_rotated_at: null,
      plan_id: null,
      note: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await s.deps.db.insertInto('subscription_access_groups').values({ subscription_id: id, access_group_id: groupId }).execute();
  return id;
}
async function insertPlan(groupId: string): Promise<string> {
  const now = s.clock.now();
  const id = newId('pln', now.getTime());
  await s.deps.db
    .insertInto('plans')
    .values({
      id,
      name: uniq('plan'),
      price: 500,
      currency: 'EUR',
      duration_days: 30,
      traffic_limit_bytes: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await s.deps.db.insertInto('plan_access_groups').values({ plan_id: id, access_group_id: groupId }).execute();
  return id;
}
const revision = async (id: string) =>
  Number((await s.deps.db.selectFrom('nodes').select('desired_revision').where('id', '=', id).executeTakeFirstOrThrow()).desired_revision);
const revisions = async (ids: string[]) => Promise.all(ids.map(revision));
const create = (body: Record<string, unknown>, t = token) => s.api.post('/api/v1/access-groups', body, { token: t });
const patch = (id: string, body: Record<string, unknown>) => s.api.patch(`/api/v1/access-groups/${id}`, body, { token });

beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
  profile = (
    await s.api.post(
      '/api/v1/inbound-profiles',
      { name: 'trojan', protocol: 'trojan', stream: { network: 'tcp', security: 'none' } },
      { token },
    )
  ).body.id;
});
afterAll(() => s.stop());

describe('access groups: create and read', () => {
  it('creates a group of existing inbounds (deduplicated, sorted by id), audited; no subscription has it yet, so no revision moves', async () => {
    const node = await insertNode();
    const [a, b] = [await inbound(node), await inbound(node)];
    const r0 = await revision(node);
    const res = await create({ name: 'europe', inbound_ids: [b, a, b] });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ name: 'europe', inbound_ids: [a, b].sort() });
    expect(res.body.id).toMatch(/^agr_/);
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'id', 'inbound_ids', 'name', 'updated_at']);
    expect(await revision(node)).toBe(r0);
    expect((await s.api.get(`/api/v1/access-groups/${res.body.id}`, { token })).body).toEqual(res.body);
    const audit = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ action: 'access_group.created', actor_id: ownerId, entity_type: 'access_group' });
    const empty = await create({ name: uniq('empty') });
    expect(empty.body.inbound_ids).toEqual([]);
  });

  it('unknown inbounds are 400 per position; names are unique (409); unknown fields and bad names are 400', async () => {
    const node = await insertNode();
    const a = await inbound(node);
    const res = await create({ name: uniq('g'), inbound_ids: [a, 'inb_nope'] });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ 'inbound_ids.1': 'no such inbound: inb_nope' });
    const name = uniq('g');
    expect((await create({ name })).status).toBe(201);
    const dup = await create({ name });
    expect(dup.status).toBe(409);
    expect(dup.body.errors.name).toBe('already taken');
    expect((await create({ name: uniq('g'), members: [] })).status).toBe(400);
    const blank = await create({ name: '  ' });
    expect(blank.status).toBe(400);
    expect(blank.body.errors.name).toBeDefined();
    expect((await s.api.get('/api/v1/access-groups/agr_nope', { token })).status).toBe(404);
  });

  it('a pagination walk visits every group once, oldest first; filter inbound_id lists the groups containing it', async () => {
    const node = await insertNode();
    const x = await inbound(node);
    const withX: string[] = [];
    for (let i = 0; i < 6; i++) {
      const g = await create({ name: uniq('walk'), inbound_ids: i % 2 ? [x] : [] });
      if (i % 2) withX.push(g.body.id);
    }
    const all = (await s.api.get('/api/v1/access-groups?limit=200', { token })).body.items.map((g: { id: string }) => g.id);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await s.api.get(`/api/v1/access-groups?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      walked.push(...res.body.items.map((g: { id: string }) => g.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(walked).toEqual(all);
    expect([...walked].sort()).toEqual(walked);
    const filtered = await s.api.get(`/api/v1/access-groups?inbound_id=${x}&limit=1`, { token });
    expect(filtered.body.items.map((g: { id: string }) => g.id)).toEqual([withX[0]]);
    expect(filtered.body.items[0].inbound_ids).toEqual([x]);
    const next = await s.api.get(`/api/v1/access-groups?inbound_id=${x}&cursor=${encodeURIComponent(filtered.body.next_cursor)}`, {
      token,
    });
    expect(next.body.items.map((g: { id: string }) => g.id)).toEqual(withX.slice(1));
  });
});

describe('access groups: update and revisions', () => {
  it('PATCH inbound_ids replaces the list; exactly the nodes of the added and the removed inbounds get a new revision', async () => {
    const [n1, n2, n3, n4, n5] = [await insertNode(), await insertNode(), await insertNode(), await insertNode(), await insertNode()];
    const [i1, i2, i3, i4, i5] = [await inbound(n1), await inbound(n2), await inbound(n3), await inbound(n4), await inbound(n5)];
    const g = await create({ name: uniq('rev'), inbound_ids: [i1, i2, i3] });
    await insertSubscription(g.body.id);
    const before = await revisions([n1, n2, n3, n4, n5]);
    const res = await patch(g.body.id, { inbound_ids: [i2, i3, i4] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.inbound_ids).toEqual([i2, i3, i4].sort());
    // i1 removed (n1), i4 added (n4); n2 and n3 keep their inbounds in the group; n5 has nothing to do with it.
    expect(await revisions([n1, n2, n3, n4, n5])).toEqual([before[0]! + 1, before[1], before[2], before[3]! + 1, before[4]]);
    const audit = await s.deps.db
      .selectFrom('audit_log')
      .select(['details', 'actor_id'])
      .where('entity_id', '=', g.body.id)
      .where('action', '=', 'access_group.updated')
      .executeTakeFirstOrThrow();
    expect(audit.actor_id).toBe(ownerId);
    expect(audit.details).toMatchObject({ added: [i4], removed: [i1], nodes_bumped: [n1, n4].sort() });
    void i5;
  });

  it('the same membership again (any order, duplicates) and a rename move no revision', async () => {
    const [n1, n2] = [await insertNode(), await insertNode()];
    const [i1, i2] = [await inbound(n1), await inbound(n2)];
    const g = await create({ name: uniq('same'), inbound_ids: [i1, i2] });
    const before = await revisions([n1, n2]);
    const res = await patch(g.body.id, { inbound_ids: [i2, i1, i2] });
    expect(res.status).toBe(200);
    expect(res.body.inbound_ids).toEqual([i1, i2].sort());
    const renamed = await patch(g.body.id, { name: uniq('renamed') });
    expect(renamed.body.inbound_ids).toEqual([i1, i2].sort());
    expect(await revisions([n1, n2])).toEqual(before);
  });

  it('emptying a group moves the revision of every node it had; an unknown inbound in the new list changes nothing', async () => {
    const [n1, n2] = [await insertNode(), await insertNode()];
    const [i1, i2] = [await inbound(n1), await inbound(n2)];
    const g = await create({ name: uniq('empty'), inbound_ids: [i1, i2] });
    const bad = await patch(g.body.id, { inbound_ids: [i1, 'inb_nope'] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors['inbound_ids.1']).toBeDefined();
    expect((await s.api.get(`/api/v1/access-groups/${g.body.id}`, { token })).body.inbound_ids).toEqual([i1, i2].sort());
    const before = await revisions([n1, n2]);
    expect((await patch(g.body.id, { inbound_ids: [] })).body.inbound_ids).toEqual([]);
    expect(await revisions([n1, n2])).toEqual(before.map((r) => r + 1));
  });

  it('PATCH: a taken name is 409, unknown fields 400, an unknown group 404', async () => {
    const a = await create({ name: uniq('a') });
    const b = await create({ name: uniq('b') });
    const taken = await patch(b.body.id, { name: a.body.name });
    expect(taken.status).toBe(409);
    expect(taken.body.errors.name).toBeDefined();
    expect((await patch(b.body.id, { inbounds: [] })).status).toBe(400);
    expect((await patch('agr_nope', { name: uniq('x') })).status).toBe(404);
  });
});

describe('access groups: delete, roles', () => {
  it('DELETE is refused (409) while subscriptions or plans are granted the group, naming them; then 204 and 404', async () => {
    const node = await insertNode();
    const i = await inbound(node);
    const g = await create({ name: uniq('del'), inbound_ids: [i] });
    const sub = await insertSubscription(g.body.id);
    const plan = await insertPlan(g.body.id);
    const both = await s.api.delete(`/api/v1/access-groups/${g.body.id}`, { token });
    expect(both.status).toBe(409);
    expect(both.body.type).toBe('urn:svc:problem:conflict');
    expect(both.body.blocked_by).toEqual({ subscriptions: [sub], plans: [plan] });
    expect(both.body.detail).toContain(sub);
    expect(both.body.detail).toContain(plan);

    await s.deps.db.deleteFrom('subscription_access_groups').where('subscription_id', '=', sub).execute();
    const plans = await s.api.delete(`/api/v1/access-groups/${g.body.id}`, { token });
    expect(plans.status).toBe(409);
    expect(plans.body.blocked_by).toEqual({ plans: [plan] });

    await s.deps.db.deleteFrom('plan_access_groups').where('plan_id', '=', plan).execute();
    expect((await s.api.delete(`/api/v1/access-groups/${g.body.id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/access-groups/${g.body.id}`, { token })).status).toBe(404);
    // Its inbound is free to go now.
    expect((await s.api.delete(`/api/v1/inbounds/${i}`, { token })).status).toBe(204);
    const actions = (
      await s.deps.db.selectFrom('audit_log').select('action').where('entity_id', '=', g.body.id).orderBy('id').execute()
    ).map((r) => r.action);
    expect(actions).toEqual(['access_group.created', 'access_group.deleted']);
  });

  it('a viewer reads but gets 403 on every write', async () => {
    const viewer = await adminWithRole(s, token, 'viewer');
    const g = await create({ name: uniq('v') });
    const t = viewer.access_token;
    expect((await s.api.get('/api/v1/access-groups', { token: t })).status).toBe(200);
    expect((await s.api.get(`/api/v1/access-groups/${g.body.id}`, { token: t })).status).toBe(200);
    expect((await create({ name: uniq('v') }, t)).status).toBe(403);
    expect((await s.api.patch(`/api/v1/access-groups/${g.body.id}`, { name: uniq('v') }, { token: t })).status).toBe(403);
    expect((await s.api.delete(`/api/v1/access-groups/${g.body.id}`, { token: t })).status).toBe(403);
  });
});
