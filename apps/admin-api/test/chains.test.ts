// HTTP concerns of /chains: status codes, problem documents, roles, pages and the node_id
// filter, the OpenAPI document. What createChain/updateChain/deleteChain decide (hop rules,
// port conflicts, revisions, secrets, audit details) is proven in packages/domain-tests/test/chains.
import { withActor } from '@svc/domain';
import { adminWithRole, type Fixtures, fixtures, pageAll, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let viewer: string;
let f: Fixtures;
beforeAll(async () => {
  s = await startAdminApi();
  const owner = await setupOwner(s);
  token = owner.access_token;
  ownerId = owner.admin.id;
  viewer = (await adminWithRole(s, token, 'viewer')).access_token;
  f = fixtures(withActor(s.deps, TEST_OWNER));
});
afterAll(() => s.stop());

let seq = 0;
const uniq = (p: string) => `${p}-${++seq}`;
const node = async () => (await f.node()).id;
const hops = (...list: Array<[string, number]>) => list.map(([node_id, port]) => ({ node_id, port }));
const postChain = (body: Record<string, unknown>, as = token) => s.api.post('/api/v1/chains', body, { token: as });
const chain = (...list: Array<[string, number]>) => f.chain({ hops: hops(...list) });

const walk = (path: string, limit: number, between?: (page: number) => Promise<void>) =>
  pageAll(s.api, path, { limit, token, ...(between ? { between } : {}) });

describe('POST /chains and GET /chains/{id}', () => {
  it('201 with the chain and its ordered hops, audited as the admin of the token; GET answers the same; no hop secret in a response', async () => {
    const [a, b] = [await node(), await node()];
    const res = await postChain({ name: ' fra-ams ', hops: hops([a, 30001], [b, 30002]) });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'fra-ams',
      hops: [
        { position: 0, node_id: a, port: 30001 },
        { position: 1, node_id: b, port: 30002 },
      ],
    });
    const got = await s.api.get(`/api/v1/chains/${res.body.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    const rows = await s.deps.db.selectFrom('chain_hops').select('secret').where('chain_id', '=', res.body.id).execute();
    for (const { secret } of rows) {
      expect(res.text).not.toContain(secret);
      expect(got.text).not.toContain(s.deps.secrets.open(secret));
    }
    const audit = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', res.body.id).execute();
    expect(audit).toMatchObject([{ action: 'chain.created', actor_type: 'admin', actor_id: ownerId }]);
  });

  it('a bad body is a 400 validation problem with an error per field (nested by index, the body itself as (body))', async () => {
    const [a, b] = [await node(), await node()];
    const cases: Array<[unknown, string[]]> = [
      [{ hops: hops([a, 1], [b, 1]) }, ['name']],
      [{ name: uniq('c'), hops: hops([a, 1]) }, ['hops']],
      [{ name: uniq('c'), hops: hops([a, 0], [b, 65536]) }, ['hops.0.port', 'hops.1.port']],
      [
        {
          name: uniq('c'),
          hops: [
            { node_id: a, port: 10, secret: 'x' },
            { node_id: b, port: 11 },
          ],
        },
        ['hops.0'],
      ],
      [{ name: uniq('c'), hops: hops([a, 10], [b, 11]), extra: 1 }, ['(body)']],
      [{ name: uniq('c'), hops: hops([a, 10], [b, 11], [a, 12]) }, ['hops.2.node_id']],
    ];
    for (const [body, fields] of cases) {
      const res = await postChain(body as Record<string, unknown>);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.type).toBe('urn:svc:problem:validation');
      expect(Object.keys(res.body.errors).sort(), JSON.stringify(body)).toEqual(fields.sort());
    }
    expect(await s.deps.db.selectFrom('chain_hops').selectAll().where('port', 'in', [1, 10, 11, 12]).execute()).toEqual([]);
  });

  it('an unknown hop node is a 400 naming the hop; a taken name or port a 409 conflict problem naming the blocker', async () => {
    const [a, b] = [await node(), await node()];
    const missing = await postChain({ name: uniq('c'), hops: hops([a, 32000], ['nod_missing', 32000]) });
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual({ 'hops.1.node_id': 'no node nod_missing' });
    const first = await chain([a, 33000], [b, 33000]);
    const name = await postChain({ name: first.name, hops: hops([a, 33001], [b, 33001]) });
    expect(name.status).toBe(409);
    expect(name.body.errors.name).toBe('already taken');
    const inbound = await f.inbound({ node_id: b, port: 443 });
    const port = await postChain({ name: uniq('c'), hops: hops([a, 443], [b, 443]) });
    expect(port.status).toBe(409);
    expect(port.body.type).toBe('urn:svc:problem:conflict');
    expect(port.body.errors).toEqual({ 'hops.1.port': `port 443 of node ${b} is taken by inbound ${inbound.id}` });
    expect(port.body.blocked_by).toEqual({ inbounds: [inbound.id] });
    expect(port.body.detail).toContain(inbound.id);
  });
});

describe('GET /chains: keyset pages and the node_id filter', () => {
  it('walks every chain exactly once, oldest first, each with its hops', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    for (let i = 0; i < 12; i++) await chain([a, 36000 + i], [b, 36000 + i]);
    await chain([c, 36100], [b, 36100]);
    const all = await walk('/api/v1/chains', 200);
    expect([...all].sort()).toEqual(all);
    for (const limit of [1, 5]) expect(await walk('/api/v1/chains', limit)).toEqual(all);
    const page = await s.api.get('/api/v1/chains?limit=3', { token });
    for (const item of page.body.items) expect(item.hops.length).toBeGreaterThanOrEqual(2);

    expect(await walk(`/api/v1/chains?node_id=${a}`, 4)).toHaveLength(12);
    expect(await walk(`/api/v1/chains?node_id=${b}`, 4)).toHaveLength(13);
    const ofC = await s.api.get(`/api/v1/chains?node_id=${c}`, { token });
    expect(ofC.body.items.map((x: { hops: unknown }) => x.hops)).toEqual([
      [
        { position: 0, node_id: c, port: 36100 },
        { position: 1, node_id: b, port: 36100 },
      ],
    ]);
    expect((await s.api.get('/api/v1/chains?node_id=nod_none', { token })).body).toEqual({ items: [], next_cursor: null });
    expect((await s.api.get('/api/v1/chains?limit=0', { token })).status).toBe(400);
  });

  it('an unknown chain is a 404', async () => {
    expect((await s.api.get('/api/v1/chains/chn_missing', { token })).status).toBe(404);
    expect((await s.api.patch('/api/v1/chains/chn_missing', { name: 'x' }, { token })).status).toBe(404);
    expect((await s.api.delete('/api/v1/chains/chn_missing', { token })).status).toBe(404);
  });
});

describe('PATCH /chains/{id}', () => {
  it('200 with the merged chain; a bad body 400 per field; moving the first hop under routed inbounds a 409 naming them', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const ch = await chain([a, 41000], [b, 41000]);
    const renamed = await s.api.patch(`/api/v1/chains/${ch.id}`, { name: uniq('renamed') }, { token });
    expect(renamed.status).toBe(200);
    expect(renamed.body.hops.map((h: { node_id: string }) => h.node_id)).toEqual([a, b]);
    expect((await s.api.patch(`/api/v1/chains/${ch.id}`, { position: 1 }, { token })).status).toBe(400);
    const dup = await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([a, 41000], [a, 41003]) }, { token });
    expect(dup.status).toBe(400);
    expect(Object.keys(dup.body.errors)).toEqual(['hops.1.node_id']);
    const inbound = await f.inbound({ node_id: a, port: 7443, chain_id: ch.id });
    const moved = await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([c, 41000], [b, 41000]) }, { token });
    expect(moved.status).toBe(409);
    expect(moved.body.type).toBe('urn:svc:problem:conflict');
    expect(moved.body.blocked_by).toEqual({ inbounds: [inbound.id] });
    expect(moved.body.errors['hops.0.node_id']).toBeDefined();
  });
});

describe('DELETE /chains/{id}', () => {
  it('409 conflict problem naming the routed inbounds (blocked_by); 204 once free; then 404', async () => {
    const [a, b] = [await node(), await node()];
    const ch = await chain([a, 43000], [b, 43000]);
    const inbound = await f.inbound({ node_id: a, port: 6443, chain_id: ch.id });
    const blocked = await s.api.delete(`/api/v1/chains/${ch.id}`, { token });
    expect(blocked.status).toBe(409);
    expect(blocked.body.type).toBe('urn:svc:problem:conflict');
    expect(blocked.body.blocked_by).toEqual({ inbounds: [inbound.id] });
    expect(blocked.body.detail).toMatch(/inbound/);
    expect((await s.api.delete(`/api/v1/inbounds/${inbound.id}`, { token })).status).toBe(204);
    expect((await s.api.delete(`/api/v1/chains/${ch.id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/chains/${ch.id}`, { token })).status).toBe(404);
  });
});

describe('roles: a viewer reads chains but changes nothing', () => {
  it('viewer: GET 200; POST, PATCH, DELETE 403, nothing written, nothing bumped', async () => {
    const [a, b] = [await node(), await node()];
    const ch = await chain([a, 45000], [b, 45000]);
    const revisions = () =>
      s.deps.db.selectFrom('nodes').select(['id', 'desired_revision']).where('id', 'in', [a, b]).orderBy('id').execute();
    const before = await revisions();
    expect((await s.api.get('/api/v1/chains', { token: viewer })).status).toBe(200);
    expect((await s.api.get(`/api/v1/chains/${ch.id}`, { token: viewer })).status).toBe(200);
    const writes = [
      await postChain({ name: uniq('v'), hops: hops([a, 45001], [b, 45001]) }, viewer),
      await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([b, 45002], [a, 45002]) }, { token: viewer }),
      await s.api.delete(`/api/v1/chains/${ch.id}`, { token: viewer }),
    ];
    for (const res of writes) expect(res.status).toBe(403);
    expect(await revisions()).toEqual(before);
    const actions = await s.deps.db.selectFrom('audit_log').select('action').where('entity_id', '=', ch.id).execute();
    expect(actions.map((x) => x.action)).toEqual(['chain.created']);
    expect((await s.api.get(`/api/v1/chains/${ch.id}`, { token })).body.hops.map((h: { port: number }) => h.port)).toEqual([45000, 45000]);
  });
});

describe('OpenAPI document', () => {
  it('declares every chain operation with its schemas and roles', async () => {
    const { paths, components } = (await s.api.get('/api/v1/openapi.json')).body;
    for (const [path, method] of [
      ['/api/v1/chains', 'get'],
      ['/api/v1/chains', 'post'],
      ['/api/v1/chains/{id}', 'get'],
      ['/api/v1/chains/{id}', 'patch'],
      ['/api/v1/chains/{id}', 'delete'],
    ] as const) {
      const op = paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op['x-roles']).toEqual(method === 'get' ? ['owner', 'admin', 'viewer'] : ['owner', 'admin']);
    }
    expect(paths['/api/v1/chains'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CreateChain');
    expect(paths['/api/v1/chains/{id}'].patch.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/UpdateChain');
    expect(Object.keys(components.schemas)).toEqual(expect.arrayContaining(['Chain', 'ChainHop', 'ChainHopInput', 'ChainPage']));
    expect(JSON.stringify(components.schemas.Chain)).not.toContain('secret');
  });
});
