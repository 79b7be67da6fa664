// HTTP concerns of /access-groups: status codes, problem documents, roles, pages and the
// inbound_id filter. What the use cases decide (membership, revisions, what blocks a delete,
// audit details) is proven in packages/domain-tests/test/access-groups.
import { withActor } from '@svc/domain';
import { adminWithRole, type Fixtures, fixtures, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let f: Fixtures;

let seq = 0;
const uniq = (p: string) => `${p}-${++seq}`;
const create = (body: Record<string, unknown>, t = token) => s.api.post('/api/v1/access-groups', body, { token: t });
const patch = (id: string, body: Record<string, unknown>) => s.api.patch(`/api/v1/access-groups/${id}`, body, { token });

beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
  f = fixtures(withActor(s.deps, TEST_OWNER));
});
afterAll(() => s.stop());

describe('POST /access-groups and GET /access-groups/{id}', () => {
  it('201 with the group, audited as the admin of the token; GET answers the same', async () => {
    const [a, b] = [(await f.inbound()).id, (await f.inbound()).id];
    const res = await create({ name: 'europe', inbound_ids: [b, a, b] });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ name: 'europe', inbound_ids: [a, b].sort() });
    expect((await s.api.get(`/api/v1/access-groups/${res.body.id}`, { token })).body).toEqual(res.body);
    const audit = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', res.body.id).execute();
    expect(audit).toMatchObject([{ action: 'access_group.created', actor_type: 'admin', actor_id: ownerId }]);
  });

  it('a bad body is a 400 per field; unknown inbounds a 400 per position; a taken name a 409; an unknown group a 404', async () => {
    const blank = await create({ name: '  ' });
    expect(blank.status).toBe(400);
    expect(blank.body.type).toBe('urn:svc:problem:validation');
    expect(blank.body.errors.name).toBeDefined();
    expect((await create({ name: uniq('g'), members: [] })).status).toBe(400);
    const a = (await f.inbound()).id;
    const unknown = await create({ name: uniq('g'), inbound_ids: [a, 'inb_nope'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual({ 'inbound_ids.1': 'no such inbound: inb_nope' });
    const taken = await create({ name: (await f.accessGroup()).name });
    expect(taken.status).toBe(409);
    expect(taken.body.type).toBe('urn:svc:problem:conflict');
    expect(taken.body.errors.name).toBe('already taken');
    expect((await s.api.get('/api/v1/access-groups/agr_nope', { token })).status).toBe(404);
  });
});

describe('GET /access-groups', () => {
  it('a pagination walk visits every group once, oldest first; filter inbound_id lists the groups containing it', async () => {
    const x = (await f.inbound()).id;
    const withX: string[] = [];
    for (let i = 0; i < 6; i++) {
      const g = await f.accessGroup({ inbound_ids: i % 2 ? [x] : [] });
      if (i % 2) withX.push(g.id);
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

describe('PATCH /access-groups/{id}', () => {
  it('200 with the new membership; unknown fields 400; a taken name 409; an unknown group 404', async () => {
    const i = (await f.inbound()).id;
    const [a, b] = [await f.accessGroup(), await f.accessGroup()];
    const res = await patch(b.id, { inbound_ids: [i] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.inbound_ids).toEqual([i]);
    expect((await s.api.get(`/api/v1/access-groups/${b.id}`, { token })).body).toEqual(res.body);
    expect((await patch(b.id, { inbounds: [] })).status).toBe(400);
    const taken = await patch(b.id, { name: a.name });
    expect(taken.status).toBe(409);
    expect(taken.body.errors.name).toBeDefined();
    expect((await patch('agr_nope', { name: uniq('x') })).status).toBe(404);
  });
});

describe('DELETE /access-groups/{id}', () => {
  it('409 conflict problem naming what the group is granted to (blocked_by); 204 once nothing is; then 404', async () => {
    const g = await f.accessGroup({ inbound_ids: [(await f.inbound()).id] });
    const client = await s.api.post('/api/v1/clients', { email: `${uniq('c')}@example.com` }, { token });
    const sub = await s.api.post('/api/v1/subscriptions', { client_id: client.body.id, access_group_ids: [g.id] }, { token });
    expect(sub.status, sub.text).toBe(201);
    const blocked = await s.api.delete(`/api/v1/access-groups/${g.id}`, { token });
    expect(blocked.status).toBe(409);
    expect(blocked.body.type).toBe('urn:svc:problem:conflict');
    expect(blocked.body.blocked_by).toEqual({ subscriptions: [sub.body.id] });
    expect(blocked.body.detail).toContain(sub.body.id);
    expect((await s.api.delete(`/api/v1/subscriptions/${sub.body.id}`, { token })).status).toBe(204);
    expect((await s.api.delete(`/api/v1/access-groups/${g.id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/access-groups/${g.id}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/access-groups/${g.id}`, { token })).status).toBe(404);
  });
});

describe('roles', () => {
  it('a viewer reads but gets 403 on every write', async () => {
    const viewer = await adminWithRole(s, token, 'viewer');
    const g = await f.accessGroup();
    const t = viewer.access_token;
    expect((await s.api.get('/api/v1/access-groups', { token: t })).status).toBe(200);
    expect((await s.api.get(`/api/v1/access-groups/${g.id}`, { token: t })).status).toBe(200);
    expect((await create({ name: uniq('v') }, t)).status).toBe(403);
    expect((await s.api.patch(`/api/v1/access-groups/${g.id}`, { name: uniq('v') }, { token: t })).status).toBe(403);
    expect((await s.api.delete(`/api/v1/access-groups/${g.id}`, { token: t })).status).toBe(403);
  });
});
