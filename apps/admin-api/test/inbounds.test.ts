// HTTP concerns of /inbounds: status codes, problem documents, roles, pages and filters. What
// createInbound/updateInbound/deleteInbound decide (ports, chains, revisions, the host's
// normal form, audit details) is proven in packages/domain-tests/test/inbounds.
import { withActor } from '@svc/domain';
import { adminWithRole, type Fixtures, fixtures, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let vless: string;
let vmess: string;
let f: Fixtures;

const create = (body: Record<string, unknown>, t = token) => s.api.post('/api/v1/inbounds', body, { token: t });
const patch = (id: string, body: Record<string, unknown>) => s.api.patch(`/api/v1/inbounds/${id}`, body, { token });
const node = async () => (await f.node()).id;

beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
  f = fixtures(withActor(s.deps, TEST_OWNER));
  vless = (await f.profile({ protocol: 'vless' })).id;
  vmess = (await f.profile({ protocol: 'vmess', stream: { network: 'ws', security: 'none' } })).id;
});
afterAll(() => s.stop());

describe('POST /inbounds and GET /inbounds/{id}', () => {
  it('201 with the inbound, audited as the admin of the token; GET answers the same', async () => {
    const n = await node();
    const res = await create({ node_id: n, profile_id: vless, port: 443, host: 'Edge.Example.COM.' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      node_id: n,
      profile_id: vless,
      port: 443,
      tag: 'vless-443',
      host: 'edge.example.com',
      chain_id: null,
    });
    const got = await s.api.get(`/api/v1/inbounds/${res.body.id}`, { token });
    expect(got.body).toEqual(res.body);
    const audit = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', res.body.id).execute();
    expect(audit).toMatchObject([{ action: 'inbound.created', actor_type: 'admin', actor_id: ownerId }]);
  });

  it('a bad body is a 400 validation problem with an error per field', async () => {
    const n = await node();
    const bad = await create({ node_id: n, profile_id: vmess, port: 0, listen: 'localhost', host: 'http://x/' });
    expect(bad.status).toBe(400);
    expect(bad.body.type).toBe('urn:svc:problem:validation');
    expect(Object.keys(bad.body.errors).sort()).toEqual(['host', 'listen', 'port']);
    const missing = await s.api.post('/api/v1/inbounds', {}, { token });
    expect(Object.keys(missing.body.errors)).toEqual(expect.arrayContaining(['node_id', 'profile_id', 'port']));
    expect((await create({ node_id: n, profile_id: vmess, port: 82, tag: 'mine' })).status).toBe(400);
  });

  it('unknown references are a 400 problem naming each field; a taken port a 409 conflict problem naming the blocker', async () => {
    const res = await create({ node_id: 'nod_nope', profile_id: 'ipr_nope', port: 443, chain_id: 'chn_nope' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ node_id: 'no such node', profile_id: 'no such inbound profile', chain_id: 'no such chain' });
    const first = await f.inbound({ profile_id: vless });
    const dup = await create({ node_id: first.node_id, profile_id: vmess, port: first.port });
    expect(dup.status).toBe(409);
    expect(dup.body.type).toBe('urn:svc:problem:conflict');
    expect(dup.body.blocked_by).toEqual({ inbounds: [first.id] });
    expect(dup.body.errors.port).toContain(first.id);
  });
});

describe('PATCH /inbounds/{id}', () => {
  it('200 with the merged inbound; unknown fields 400; a taken port 409; an unknown inbound 404', async () => {
    const n = await node();
    const a = await f.inbound({ node_id: n, profile_id: vless, port: 1000, host: 'h.example.com' });
    const b = await f.inbound({ node_id: n, profile_id: vmess, port: 1001 });
    const res = await patch(a.id, { port: 1002 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ port: 1002, tag: 'vless-1002', host: 'h.example.com' });
    expect((await s.api.get(`/api/v1/inbounds/${a.id}`, { token })).body).toEqual(res.body);
    expect((await patch(a.id, { tag: 'x' })).status).toBe(400);
    const taken = await patch(a.id, { port: 1001 });
    expect(taken.status).toBe(409);
    expect(taken.body.blocked_by).toEqual({ inbounds: [b.id] });
    expect((await patch('inb_nope', { port: 1 })).status).toBe(404);
  });
});

describe('GET /inbounds', () => {
  it('a pagination walk visits every inbound once; filters node_id, profile_id, chain_id', async () => {
    const [a, b] = [await node(), await node()];
    const chain = await f.chain({
      hops: [
        { node_id: a, port: 40000 },
        { node_id: b, port: 40001 },
      ],
    });
    const ids: string[] = [];
    for (let port = 5000; port < 5007; port++) ids.push((await f.inbound({ node_id: a, profile_id: port % 2 ? vless : vmess, port })).id);
    ids.push((await f.inbound({ node_id: a, profile_id: vless, port: 5007, chain_id: chain.id })).id);
    await f.inbound({ node_id: b, profile_id: vless, port: 5000 });

    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await s.api.get(`/api/v1/inbounds?node_id=${a}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        token,
      });
      expect(res.status).toBe(200);
      walked.push(...res.body.items.map((i: { id: string }) => i.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(walked).toEqual(ids);

    const all = (await s.api.get('/api/v1/inbounds?limit=200', { token })).body.items;
    expect(all.map((i: { id: string }) => i.id)).toEqual([...all.map((i: { id: string }) => i.id)].sort());
    const byProfile = (await s.api.get(`/api/v1/inbounds?profile_id=${vmess}&limit=200`, { token })).body.items;
    expect(byProfile.length).toBe(all.filter((i: { profile_id: string }) => i.profile_id === vmess).length);
    expect(byProfile.every((i: { profile_id: string }) => i.profile_id === vmess)).toBe(true);
    const both = (await s.api.get(`/api/v1/inbounds?profile_id=${vmess}&node_id=${a}`, { token })).body.items;
    expect(both.map((i: { port: number }) => i.port)).toEqual([5000, 5002, 5004, 5006]);
    const byChain = (await s.api.get(`/api/v1/inbounds?chain_id=${chain.id}`, { token })).body.items;
    expect(byChain.map((i: { id: string }) => i.id)).toEqual([ids[7]]);
    expect((await s.api.get('/api/v1/inbounds?node_id=nod_nobody', { token })).body).toEqual({ items: [], next_cursor: null });
  });
});

describe('DELETE /inbounds/{id}', () => {
  it('409 conflict problem naming the access groups holding it (blocked_by); 204 once free; then 404', async () => {
    const i = await f.inbound();
    const group = await f.accessGroup({ inbound_ids: [i.id] });
    const blocked = await s.api.delete(`/api/v1/inbounds/${i.id}`, { token });
    expect(blocked.status).toBe(409);
    expect(blocked.body.type).toBe('urn:svc:problem:conflict');
    expect(blocked.body.blocked_by).toEqual({ access_groups: [group.id] });
    expect(blocked.body.detail).toContain(group.id);
    expect((await s.api.patch(`/api/v1/access-groups/${group.id}`, { inbound_ids: [] }, { token })).status).toBe(200);
    expect((await s.api.delete(`/api/v1/inbounds/${i.id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/inbounds/${i.id}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/inbounds/${i.id}`, { token })).status).toBe(404);
  });
});

describe('roles', () => {
  it('a viewer reads but gets 403 on every write', async () => {
    const viewer = await adminWithRole(s, token, 'viewer');
    const i = await f.inbound({ profile_id: vmess });
    const t = viewer.access_token;
    expect((await s.api.get('/api/v1/inbounds', { token: t })).status).toBe(200);
    expect((await s.api.get(`/api/v1/inbounds/${i.id}`, { token: t })).status).toBe(200);
    expect((await create({ node_id: i.node_id, profile_id: vmess, port: 7001 }, t)).status).toBe(403);
    expect((await s.api.patch(`/api/v1/inbounds/${i.id}`, { port: 7002 }, { token: t })).status).toBe(403);
    expect((await s.api.delete(`/api/v1/inbounds/${i.id}`, { token: t })).status).toBe(403);
  });
});
