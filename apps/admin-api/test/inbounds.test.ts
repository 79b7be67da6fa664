import { newId } from '@svc/domain';
import { adminWithRole, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let vless: string;
let vmess: string;

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
/** A chain as the chains feature stores it: ordered hops, each with the port its chain-in listens on. */
async function insertChain(hops: [string, number][]): Promise<string> {
  const now = s.clock.now();
  const id = newId('chn', now.getTime());
  await s.deps.db
    .insertInto('chains')
    .values({ id, name: uniq('chain'), created_at: now, updated_at: now })
    .execute();
  await s.deps.db
    .insertInto('chain_hops')
    .values(hops.map(([node_id, port], position) => ({ chain_id: id, position, node_id, port, secret: `secret-${position}` })))
    .execute();
  return id;
}
const revision = async (id: string) =>
  Number((await s.deps.db.selectFrom('nodes').select('desired_revision').where('id', '=', id).executeTakeFirstOrThrow()).desired_revision);
const revisions = async (ids: string[]) => Promise.all(ids.map(revision));
const create = (body: Record<string, unknown>, t = token) => s.api.post('/api/v1/inbounds', body, { token: t });
const patch = (id: string, body: Record<string, unknown>) => s.api.patch(`/api/v1/inbounds/${id}`, body, { token });

beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
  const p1 = await s.api.post(
    '/api/v1/inbound-profiles',
    {
      name: 'vless-reality',
      protocol: 'vless',
      stream: { network: 'tcp', security: 'reality', reality: { dest: 'www.example.com:443', server_names: ['www.example.com'] } },
    },
    { token },
  );
  const p2 = await s.api.post(
    '/api/v1/inbound-profiles',
    { name: 'vmess-ws', protocol: 'vmess', stream: { network: 'ws', security: 'none' } },
    { token },
  );
  vless = p1.body.id;
  vmess = p2.body.id;
});
afterAll(() => s.stop());

describe('inbounds: create and read', () => {
  it('binds a profile to a port of a node: tag generated, the node (and only it) gets a new revision, audited', async () => {
    const [node, other] = [await insertNode(), await insertNode()];
    const before = await revisions([node, other]);
    const res = await create({ node_id: node, profile_id: vless, port: 443, listen: '0.0.0.0', host: 'edge.example.com' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      node_id: node,
      profile_id: vless,
      port: 443,
      tag: 'vless-443',
      listen: '0.0.0.0',
      host: 'edge.example.com',
      chain_id: null,
    });
    expect(res.body.id).toMatch(/^inb_/);
    expect(res.body.created_at).toMatch(/Z$/);
    expect(await revisions([node, other])).toEqual([before[0]! + 1, before[1]]);
    const got = await s.api.get(`/api/v1/inbounds/${res.body.id}`, { token });
    expect(got.body).toEqual(res.body);
    const audit = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', res.body.id).execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'inbound.created', actor_type: 'admin', actor_id: ownerId, entity_type: 'inbound' });
  });

  it('listen must be an IP literal and host a host name or IP; port 1-65535 (400 per field)', async () => {
    const node = await insertNode();
    expect((await create({ node_id: node, profile_id: vmess, port: 80, listen: '::' })).status).toBe(201);
    const bad = await create({ node_id: node, profile_id: vmess, port: 81, listen: 'localhost', host: 'http://x/' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toMatchObject({ listen: expect.any(String), host: expect.any(String) });
    for (const port of [0, 65536, 1.5, '443']) {
      const res = await create({ node_id: node, profile_id: vmess, port });
      expect(res.status).toBe(400);
      expect(res.body.errors.port).toBeDefined();
    }
    const missing = await s.api.post('/api/v1/inbounds', {}, { token });
    expect(Object.keys(missing.body.errors)).toEqual(expect.arrayContaining(['node_id', 'profile_id', 'port']));
    expect((await create({ node_id: node, profile_id: vmess, port: 82, tag: 'mine' })).status).toBe(400);
  });

  it('unknown node, profile and chain are 400 with errors per field', async () => {
    const res = await create({ node_id: 'nod_nope', profile_id: 'ipr_nope', port: 443, chain_id: 'chn_nope' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ node_id: 'no such node', profile_id: 'no such inbound profile', chain_id: 'no such chain' });
  });

  it('a port is unique per node across inbounds: 409 naming the inbound; the same port on another node is fine', async () => {
    const [a, b] = [await insertNode(), await insertNode()];
    const first = await create({ node_id: a, profile_id: vless, port: 8443 });
    const dup = await create({ node_id: a, profile_id: vmess, port: 8443 });
    expect(dup.status).toBe(409);
    expect(dup.body.type).toBe('urn:svc:problem:conflict');
    expect(dup.body.blocked_by).toEqual({ inbounds: [first.body.id] });
    expect(dup.body.errors.port).toContain(first.body.id);
    expect((await create({ node_id: b, profile_id: vmess, port: 8443 })).status).toBe(201);
  });

  it('a port is unique per node across chain hops too: 409 naming the chain', async () => {
    const [a, b] = [await insertNode(), await insertNode()];
    const chain = await insertChain([
      [a, 20000],
      [b, 20001],
    ]);
    const res = await create({ node_id: a, profile_id: vmess, port: 20000 });
    expect(res.status).toBe(409);
    expect(res.body.blocked_by).toEqual({ chains: [chain] });
    expect(res.body.detail).toContain(chain);
    expect((await create({ node_id: b, profile_id: vmess, port: 20000 })).status).toBe(201);
  });

  it("chain_id: the inbound must live on the chain's first hop node; the node and the chain's hops get new revisions", async () => {
    const [first, second, bystander] = [await insertNode(), await insertNode(), await insertNode()];
    const chain = await insertChain([
      [first, 30000],
      [second, 30001],
    ]);
    const wrong = await create({ node_id: second, profile_id: vless, port: 443, chain_id: chain });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors.chain_id).toContain(first);
    const before = await revisions([first, second, bystander]);
    const ok = await create({ node_id: first, profile_id: vless, port: 443, chain_id: chain });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.chain_id).toBe(chain);
    expect(await revisions([first, second, bystander])).toEqual([before[0]! + 1, before[1]! + 1, before[2]]);
  });
});

describe('inbounds: update (merge)', () => {
  it('PATCH port re-generates the tag and keeps the other fields; a taken port is 409; the same port is no conflict with itself', async () => {
    const node = await insertNode();
    const a = await create({ node_id: node, profile_id: vless, port: 1000, host: 'h.example.com' });
    const b = await create({ node_id: node, profile_id: vmess, port: 1001 });
    const res = await patch(a.body.id, { port: 1002 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ port: 1002, tag: 'vless-1002', host: 'h.example.com', profile_id: vless });
    const taken = await patch(a.body.id, { port: 1001 });
    expect(taken.status).toBe(409);
    expect(taken.body.blocked_by).toEqual({ inbounds: [b.body.id] });
    expect((await patch(a.body.id, { port: 1002 })).status).toBe(200);
    const profile = await patch(b.body.id, { profile_id: vless });
    expect(profile.body.tag).toBe('vless-1001');
    expect((await patch(a.body.id, { tag: 'x' })).status).toBe(400);
    expect((await patch('inb_nope', { port: 1 })).status).toBe(404);
    const unknown = await patch(a.body.id, { node_id: 'nod_nope', profile_id: 'ipr_nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toMatchObject({ node_id: 'no such node', profile_id: 'no such inbound profile' });
  });

  it('moving an inbound to another node moves the revision of the old and the new node, and no other', async () => {
    const [from, to, bystander] = [await insertNode(), await insertNode(), await insertNode()];
    const i = await create({ node_id: from, profile_id: vmess, port: 2000 });
    const before = await revisions([from, to, bystander]);
    const res = await patch(i.body.id, { node_id: to });
    expect(res.status).toBe(200);
    expect(res.body.node_id).toBe(to);
    expect(await revisions([from, to, bystander])).toEqual([before[0]! + 1, before[1]! + 1, before[2]]);
  });

  it('host only shapes client links: changing it moves no revision; listen does', async () => {
    const node = await insertNode();
    const i = await create({ node_id: node, profile_id: vmess, port: 2100 });
    const r0 = await revision(node);
    expect((await patch(i.body.id, { host: 'cdn.example.com' })).body.host).toBe('cdn.example.com');
    expect(await revision(node)).toBe(r0);
    expect((await patch(i.body.id, { host: null })).body.host).toBeNull();
    expect(await revision(node)).toBe(r0);
    expect((await patch(i.body.id, { listen: '127.0.0.1' })).body.listen).toBe('127.0.0.1');
    expect(await revision(node)).toBe(r0 + 1);
  });

  it('setting and clearing chain_id moves the revision of the node and of the chain hops', async () => {
    const [first, second, third] = [await insertNode(), await insertNode(), await insertNode()];
    const chain = await insertChain([
      [first, 31000],
      [second, 31001],
      [third, 31002],
    ]);
    const i = await create({ node_id: first, profile_id: vless, port: 443 });
    let before = await revisions([first, second, third]);
    const set = await patch(i.body.id, { chain_id: chain });
    expect(set.status, set.text).toBe(200);
    expect(await revisions([first, second, third])).toEqual(before.map((r) => r + 1));
    // Moving a chained inbound off the first hop's node is refused.
    const other = await insertNode();
    const move = await patch(i.body.id, { node_id: other });
    expect(move.status).toBe(400);
    expect(move.body.errors.chain_id).toBeDefined();
    before = await revisions([first, second, third]);
    const cleared = await patch(i.body.id, { chain_id: null });
    expect(cleared.body.chain_id).toBeNull();
    expect(await revisions([first, second, third])).toEqual(before.map((r) => r + 1));
  });
});

describe('inbounds: list, delete, roles', () => {
  it('a pagination walk visits every inbound once; filters node_id, profile_id, chain_id', async () => {
    const [a, b] = [await insertNode(), await insertNode()];
    const chain = await insertChain([
      [a, 40000],
      [b, 40001],
    ]);
    const ids: string[] = [];
    for (let port = 5000; port < 5007; port++) ids.push((await create({ node_id: a, profile_id: port % 2 ? vless : vmess, port })).body.id);
    ids.push((await create({ node_id: a, profile_id: vless, port: 5007, chain_id: chain })).body.id);
    await create({ node_id: b, profile_id: vless, port: 5000 });

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
    const byChain = (await s.api.get(`/api/v1/inbounds?chain_id=${chain}`, { token })).body.items;
    expect(byChain.map((i: { id: string }) => i.id)).toEqual([ids[7]]);
    expect((await s.api.get('/api/v1/inbounds?node_id=nod_nobody', { token })).body).toEqual({ items: [], next_cursor: null });
  });

  it('DELETE is refused (409) while the inbound is in an access group; then 204, its node gets a new revision, audited', async () => {
    const node = await insertNode();
    const i = await create({ node_id: node, profile_id: vmess, port: 6000 });
    const group = await s.api.post('/api/v1/access-groups', { name: uniq('grp'), inbound_ids: [i.body.id] }, { token });
    expect(group.status).toBe(201);
    const blocked = await s.api.delete(`/api/v1/inbounds/${i.body.id}`, { token });
    expect(blocked.status).toBe(409);
    expect(blocked.body.blocked_by).toEqual({ access_groups: [group.body.id] });
    expect(blocked.body.detail).toContain(group.body.id);
    expect((await s.api.patch(`/api/v1/access-groups/${group.body.id}`, { inbound_ids: [] }, { token })).status).toBe(200);
    const r0 = await revision(node);
    expect((await s.api.delete(`/api/v1/inbounds/${i.body.id}`, { token })).status).toBe(204);
    expect(await revision(node)).toBe(r0 + 1);
    expect((await s.api.get(`/api/v1/inbounds/${i.body.id}`, { token })).status).toBe(404);
    const actions = (
      await s.deps.db.selectFrom('audit_log').select('action').where('entity_id', '=', i.body.id).orderBy('id').execute()
    ).map((r) => r.action);
    expect(actions).toEqual(['inbound.created', 'inbound.deleted']);
    // The freed port can be taken again.
    expect((await create({ node_id: node, profile_id: vmess, port: 6000 })).status).toBe(201);
  });

  it('a viewer reads but gets 403 on every write', async () => {
    const viewer = await adminWithRole(s, token, 'viewer');
    const node = await insertNode();
    const i = await create({ node_id: node, profile_id: vmess, port: 7000 });
    const t = viewer.access_token;
    expect((await s.api.get('/api/v1/inbounds', { token: t })).status).toBe(200);
    expect((await s.api.get(`/api/v1/inbounds/${i.body.id}`, { token: t })).status).toBe(200);
    expect((await create({ node_id: node, profile_id: vmess, port: 7001 }, t)).status).toBe(403);
    expect((await s.api.patch(`/api/v1/inbounds/${i.body.id}`, { port: 7002 }, { token: t })).status).toBe(403);
    expect((await s.api.delete(`/api/v1/inbounds/${i.body.id}`, { token: t })).status).toBe(403);
  });

  it('update writes an audit row with what changed', async () => {
    const node = await insertNode();
    const i = await create({ node_id: node, profile_id: vmess, port: 7100 });
    await patch(i.body.id, { port: 7101, host: 'x.example.com' });
    const row = await s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('entity_id', '=', i.body.id)
      .where('action', '=', 'inbound.updated')
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ actor_id: ownerId, entity_type: 'inbound' });
    expect(row.details).toMatchObject({ changed: ['port', 'host'], port: { from: 7100, to: 7101 }, nodes_bumped: [node] });
  });
});
