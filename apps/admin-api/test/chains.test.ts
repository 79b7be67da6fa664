import { assertInboundFitsChain } from '@svc/domain';
import { type ApiResponse, adminWithRole, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let viewer: string;
beforeAll(async () => {
  s = await startAdminApi();
  const owner = await setupOwner(s);
  token = owner.access_token;
  ownerId = owner.admin.id;
  viewer = (await adminWithRole(s, token, 'viewer')).access_token;
});
afterAll(() => s.stop());

let seq = 0;
const uniq = (p: string) => `${p}-${++seq}`;

async function node(): Promise<string> {
  const res = await s.api.post('/api/v1/nodes', { name: uniq('node'), address: `n${seq}.example.net` }, { token });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

const hops = (...list: Array<[string, number]>) => list.map(([node_id, port]) => ({ node_id, port }));

const postChain = (body: Record<string, unknown>, as = token) => s.api.post('/api/v1/chains', body, { token: as });

async function chain(...list: Array<[string, number]>): Promise<{ id: string; name: string }> {
  const res = await postChain({ name: uniq('chain'), hops: hops(...list) });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function revisions(ids: string[]): Promise<Record<string, number>> {
  const rows = await s.deps.db.selectFrom('nodes').select(['id', 'desired_revision']).where('id', 'in', ids).execute();
  return Object.fromEntries(rows.map((r) => [r.id, Number(r.desired_revision)]));
}

/** `before` with +1 for each of `bumped`. */
const plusOne = (before: Record<string, number>, bumped: string[]) => ({
  ...before,
  ...Object.fromEntries(bumped.map((id) => [id, (before[id] as number) + 1])),
});

/** An inbound on `nodeId` inserted as rows (the inbounds API is another feature). */
async function insertInbound(nodeId: string, port: number, chainId: string | null = null): Promise<string> {
  const now = s.clock.now();
  const profileId = `ipr_${uniq('p')}`;
  await s.deps.db
    .insertInto('inbound_profiles')
    .values({
      id: profileId,
      name: profileId,
      protocol: 'trojan',
      stream: JSON.stringify({ network: 'tcp', security: 'none' }),
      sniffing: JSON.stringify({ enabled: false, dest_override: [], route_only: false }),
      vless_flow: null,
      shadowsocks_method: null,
      reality_private_key_enc: null,
      certificate_id: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const id = `inb_${uniq('i')}`;
  await s.deps.db
    .insertInto('inbounds')
    .values({
      id,
      node_id: nodeId,
      profile_id: profileId,
      tag: id,
      port,
      listen: null,
      host: null,
      chain_id: chainId,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

const auditOf = (entityId: string) =>
  s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', entityId).orderBy('id').execute();

async function pageAll(path: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < 200; n++) {
    const sep = path.includes('?') ? '&' : '?';
    const res: ApiResponse = await s.api.get(`${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
      token,
    });
    expect(res.status).toBe(200);
    expect(res.body.items.length).toBeLessThanOrEqual(limit);
    ids.push(...res.body.items.map((i: { id: string }) => i.id));
    cursor = res.body.next_cursor;
    if (!cursor) break;
  }
  return ids;
}

describe('POST /chains and GET /chains/{id}', () => {
  it('creates a chain with ordered hops (positions from 0) and reads it back; hop secrets are never shown', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const res = await postChain({ name: ' fra-ams-lon ', hops: hops([a, 30001], [b, 30002], [c, 30003]) });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^chn_[0-9a-z]{26}$/),
      name: 'fra-ams-lon',
      hops: [
        { position: 0, node_id: a, port: 30001 },
        { position: 1, node_id: b, port: 30002 },
        { position: 2, node_id: c, port: 30003 },
      ],
      created_at: s.clock.now().toISOString(),
      updated_at: s.clock.now().toISOString(),
    });
    const got = await s.api.get(`/api/v1/chains/${res.body.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);

    const rows = await s.deps.db.selectFrom('chain_hops').selectAll().where('chain_id', '=', res.body.id).orderBy('position').execute();
    expect(rows.map((r) => r.node_id)).toEqual([a, b, c]);
    const secrets = rows.map((r) => s.deps.secrets.open(r.secret));
    expect(new Set(secrets).size).toBe(3);
    for (const [i, secret] of secrets.entries()) {
      expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
      expect(rows[i]?.secret).not.toContain(secret); // sealed at rest
      expect(got.text).not.toContain(secret);
      expect(res.text).not.toContain(rows[i]?.secret);
    }
  });

  it('bumps exactly the hop nodes', async () => {
    const [a, b, c, other] = [await node(), await node(), await node(), await node()];
    const ids = [a, b, c, other];
    const before = await revisions(ids);
    await chain([c, 31000], [a, 31000]);
    expect(await revisions(ids)).toEqual(plusOne(before, [a, c]));
  });

  it('refuses bad shapes with 400 and an error per field', async () => {
    const [a, b] = [await node(), await node()];
    const cases: Array<[unknown, string[]]> = [
      [{ hops: hops([a, 1], [b, 1]) }, ['name']],
      [{ name: '', hops: hops([a, 1], [b, 1]) }, ['name']],
      [{ name: 'x'.repeat(65), hops: hops([a, 1], [b, 1]) }, ['name']],
      [{ name: uniq('c') }, ['hops']],
      [{ name: uniq('c'), hops: hops([a, 1]) }, ['hops']],
      [{ name: uniq('c'), hops: [] }, ['hops']],
      [{ name: uniq('c'), hops: Array.from({ length: 17 }, (_, i) => ({ node_id: `nod_${i}`, port: 100 + i })) }, ['hops']],
      [{ name: uniq('c'), hops: hops([a, 0], [b, 65536]) }, ['hops.0.port', 'hops.1.port']],
      [{ name: uniq('c'), hops: [{ node_id: a, port: 1.5 }, { node_id: b }] }, ['hops.0.port', 'hops.1.port']],
      [
        {
          name: uniq('c'),
          hops: [
            { node_id: a, port: 10 },
            { node_id: '', port: 11 },
          ],
        },
        ['hops.1.node_id'],
      ],
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
    expect(await s.deps.db.selectFrom('chain_hops').selectAll().where('port', 'in', [10, 11, 12]).execute()).toEqual([]);
  });

  it('an unknown hop node is a 400 naming the hop', async () => {
    const a = await node();
    const res = await postChain({ name: uniq('c'), hops: hops([a, 32000], ['nod_missing', 32000], ['nod_gone', 32001]) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ 'hops.1.node_id': 'no node nod_missing', 'hops.2.node_id': 'no node nod_gone' });
  });

  it('a taken name is a 409', async () => {
    const [a, b] = [await node(), await node()];
    const first = await chain([a, 33000], [b, 33000]);
    const res = await postChain({ name: first.name, hops: hops([a, 33001], [b, 33001]) });
    expect(res.status).toBe(409);
    expect(res.body.errors.name).toBe('already taken');
  });

  it('a hop on a port an inbound of that node uses is a 409 naming the inbound; the same port on another node is free', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const inbound = await insertInbound(b, 443);
    const res = await postChain({ name: uniq('c'), hops: hops([a, 443], [b, 443]) });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('urn:svc:problem:conflict');
    expect(res.body.errors).toEqual({ 'hops.1.port': `port 443 of node ${b} is taken by inbound ${inbound}` });
    expect(res.body.blocked_by).toEqual({ inbounds: [inbound] });
    expect(res.body.detail).toContain(inbound);
    const before = await revisions([a, b, c]);
    expect((await postChain({ name: uniq('c'), hops: hops([a, 443], [c, 443]) })).status).toBe(201);
    expect(await revisions([a, b, c])).toEqual(plusOne(before, [a, c]));
  });

  it("a hop on another chain's (node, port) is a 409 naming that chain, and nothing is written or bumped", async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const first = await chain([a, 34000], [b, 34001]);
    const before = await revisions([a, b, c]);
    const res = await postChain({ name: uniq('c'), hops: hops([c, 34000], [b, 34001]) });
    expect(res.status).toBe(409);
    expect(res.body.errors).toEqual({ 'hops.1.port': `port 34001 of node ${b} is taken by chain ${first.id}` });
    expect(res.body.blocked_by).toEqual({ chains: [first.id] });
    expect(await revisions([a, b, c])).toEqual(before);
    expect((await s.deps.db.selectFrom('chains').select('id').execute()).length).toBe((await pageAll('/api/v1/chains', 200)).length);
  });

  it('creating is audited with the hops and the bumped nodes', async () => {
    const [a, b] = [await node(), await node()];
    const c = await chain([a, 35000], [b, 35001]);
    const audit = await auditOf(c.id);
    expect(audit.map((x) => x.action)).toEqual(['chain.created']);
    expect(audit[0]).toMatchObject({ actor_type: 'admin', actor_id: ownerId, entity_type: 'chain' });
    expect(audit[0]?.details).toEqual({ name: c.name, hops: hops([a, 35000], [b, 35001]), bumped_nodes: [a, b].sort() });
  });
});

describe('GET /chains: keyset pages and the node_id filter', () => {
  it('walks every chain exactly once, oldest first, each with its hops', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    for (let i = 0; i < 12; i++) await chain([a, 36000 + i], [b, 36000 + i]);
    await chain([c, 36100], [b, 36100]);
    const all = await pageAll('/api/v1/chains', 200);
    expect([...all].sort()).toEqual(all);
    for (const limit of [1, 5]) expect(await pageAll('/api/v1/chains', limit)).toEqual(all);
    const page = await s.api.get('/api/v1/chains?limit=3', { token });
    for (const item of page.body.items) expect(item.hops.length).toBeGreaterThanOrEqual(2);

    const ofA = await pageAll(`/api/v1/chains?node_id=${a}`, 4);
    expect(ofA).toHaveLength(12);
    const ofB = await pageAll(`/api/v1/chains?node_id=${b}`, 4);
    expect(ofB).toHaveLength(13);
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
  it('a rename merges (hops untouched), bumps nothing, and is audited', async () => {
    const [a, b] = [await node(), await node()];
    const c = await chain([a, 37000], [b, 37000]);
    const before = await revisions([a, b]);
    s.clock.advance(1000);
    const res = await s.api.patch(`/api/v1/chains/${c.id}`, { name: 'renamed-chain' }, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'renamed-chain',
      hops: [{ node_id: a }, { node_id: b }],
      updated_at: s.clock.now().toISOString(),
    });
    expect(await revisions([a, b])).toEqual(before);
    const audit = (await auditOf(c.id)).filter((x) => x.action === 'chain.updated');
    expect(audit[0]?.details).toEqual({ changed: ['name'], name: { from: c.name, to: 'renamed-chain' } });
  });

  it('hops replace the whole list and bump every old and new hop node plus the nodes of inbounds using the chain', async () => {
    const [a, b, c, d, other] = [await node(), await node(), await node(), await node(), await node()];
    const ch = await chain([a, 38000], [b, 38000], [c, 38000]);
    const inbound = await insertInbound(a, 8443, ch.id);
    const ids = [a, b, c, d, other];
    const before = await revisions(ids);

    const res = await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([a, 38001], [d, 38001]) }, { token });
    expect(res.status).toBe(200);
    expect(res.body.hops).toEqual([
      { position: 0, node_id: a, port: 38001 },
      { position: 1, node_id: d, port: 38001 },
    ]);
    expect(await revisions(ids)).toEqual(plusOne(before, [a, b, c, d]));
    const rows = await s.deps.db
      .selectFrom('chain_hops')
      .select(['node_id', 'port'])
      .where('chain_id', '=', ch.id)
      .orderBy('position')
      .execute();
    expect(rows).toEqual(hops([a, 38001], [d, 38001]));

    // The freed (node, port) pairs are available to another chain.
    expect((await postChain({ name: uniq('c'), hops: hops([b, 38000], [c, 38000]) })).status).toBe(201);

    const audit = (await auditOf(ch.id)).filter((x) => x.action === 'chain.updated');
    expect(audit[0]?.details).toEqual({
      changed: ['hops'],
      hops: { from: hops([a, 38000], [b, 38000], [c, 38000]), to: hops([a, 38001], [d, 38001]) },
      bumped_nodes: [a, b, c, d].sort(),
    });
    expect(inbound).toBeTruthy();
  });

  it('the nodes of inbounds routed through the chain are bumped with the hops', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const ch = await chain([a, 39000], [b, 39000]);
    await insertInbound(a, 9443, ch.id);
    // An inbound off the first hop (written directly, as legacy data) still belongs to the chain's nodes.
    const stray = await node();
    await insertInbound(stray, 9443, ch.id);
    const before = await revisions([a, b, c, stray]);
    expect((await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([a, 39000], [c, 39000]) }, { token })).status).toBe(200);
    expect(await revisions([a, b, c, stray])).toEqual(plusOne(before, [a, b, c, stray]));
  });

  it('the same hop list again changes nothing and bumps nothing; keeping its own (node, port) is no conflict', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const ch = await chain([a, 40000], [b, 40000]);
    const before = await revisions([a, b, c]);
    expect((await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([a, 40000], [b, 40000]) }, { token })).status).toBe(200);
    expect(await revisions([a, b, c])).toEqual(before);
    const res = await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([a, 40000], [b, 40000], [c, 40000]) }, { token });
    expect(res.status).toBe(200);
    expect(await revisions([a, b, c])).toEqual(plusOne(before, [a, b, c]));
  });

  it('moving the first hop to another node while inbounds route through the chain is a 409 naming them', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const ch = await chain([a, 41000], [b, 41000]);
    const inbound = await insertInbound(a, 7443, ch.id);
    const before = await revisions([a, b, c]);
    const res = await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([c, 41000], [b, 41000]) }, { token });
    expect(res.status).toBe(409);
    expect(res.body.blocked_by).toEqual({ inbounds: [inbound] });
    expect(res.body.errors['hops.0.node_id']).toBeDefined();
    expect(await revisions([a, b, c])).toEqual(before);
    expect((await s.api.get(`/api/v1/chains/${ch.id}`, { token })).body.hops.map((h: { node_id: string }) => h.node_id)).toEqual([a, b]);
    // Changing the later hops, or the first hop's port, keeps the inbounds where they belong.
    expect((await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([a, 41001], [c, 41000]) }, { token })).status).toBe(200);
    // Without inbounds the first hop may move.
    await s.deps.db.deleteFrom('inbounds').where('id', '=', inbound).execute();
    expect((await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([b, 41000], [c, 41000]) }, { token })).status).toBe(200);
  });

  it('validation and port conflicts apply to the new list (400 per field, 409 naming the blocker)', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const ch = await chain([a, 42000], [b, 42000]);
    const other = await chain([c, 42001], [b, 42001]);
    const inbound = await insertInbound(c, 42002);
    const one = await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([a, 42000]) }, { token });
    expect(one.status).toBe(400);
    expect(one.body.errors.hops).toBeDefined();
    const dup = await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([a, 42000], [a, 42003]) }, { token });
    expect(dup.status).toBe(400);
    expect(dup.body.errors['hops.1.node_id']).toBeDefined();
    const missing = await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([a, 42000], ['nod_missing', 1]) }, { token });
    expect(missing.status).toBe(400);
    expect(missing.body.errors['hops.1.node_id']).toBe('no node nod_missing');
    const taken = await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([a, 42000], [b, 42001], [c, 42002]) }, { token });
    expect(taken.status).toBe(409);
    expect(taken.body.errors).toEqual({
      'hops.1.port': `port 42001 of node ${b} is taken by chain ${other.id}`,
      'hops.2.port': `port 42002 of node ${c} is taken by inbound ${inbound}`,
    });
    expect(taken.body.blocked_by).toEqual({ inbounds: [inbound], chains: [other.id] });
    const name = await s.api.patch(`/api/v1/chains/${ch.id}`, { name: other.name }, { token });
    expect(name.status).toBe(409);
    expect(name.body.errors.name).toBe('already taken');
    expect((await s.api.patch(`/api/v1/chains/${ch.id}`, { position: 1 }, { token })).status).toBe(400);
    expect((await s.api.get(`/api/v1/chains/${ch.id}`, { token })).body.hops).toEqual([
      { position: 0, node_id: a, port: 42000 },
      { position: 1, node_id: b, port: 42000 },
    ]);
  });
});

describe('DELETE /chains/{id}', () => {
  it('is refused with 409 naming the inbounds routed through it; afterwards it deletes, drops the hops and bumps the hop nodes', async () => {
    const [a, b, c, other] = [await node(), await node(), await node(), await node()];
    const ch = await chain([a, 43000], [b, 43000], [c, 43000]);
    const inbound = await insertInbound(a, 6443, ch.id);
    const before = await revisions([a, b, c, other]);
    const blocked = await s.api.delete(`/api/v1/chains/${ch.id}`, { token });
    expect(blocked.status).toBe(409);
    expect(blocked.body.type).toBe('urn:svc:problem:conflict');
    expect(blocked.body.blocked_by).toEqual({ inbounds: [inbound] });
    expect(blocked.body.detail).toMatch(/inbound/);
    expect(await revisions([a, b, c, other])).toEqual(before);

    await s.deps.db.deleteFrom('inbounds').where('id', '=', inbound).execute();
    expect((await s.api.delete(`/api/v1/chains/${ch.id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/chains/${ch.id}`, { token })).status).toBe(404);
    expect(await s.deps.db.selectFrom('chain_hops').selectAll().where('chain_id', '=', ch.id).execute()).toEqual([]);
    expect(await revisions([a, b, c, other])).toEqual(plusOne(before, [a, b, c]));
    const audit = await auditOf(ch.id);
    expect(audit.map((x) => x.action)).toEqual(['chain.created', 'chain.deleted']);
    expect(audit[1]).toMatchObject({ actor_id: ownerId, entity_type: 'chain' });
    expect(audit[1]?.details).toMatchObject({ name: ch.name, bumped_nodes: [a, b, c].sort() });
    // Its nodes are free to go now.
    expect((await s.api.delete(`/api/v1/nodes/${b}`, { token })).status).toBe(204);
  });
});

describe('assertInboundFitsChain (for the inbounds feature)', () => {
  it('passes only for the first hop node; an unknown chain or another node is a ValidationError on chain_id', async () => {
    const [a, b] = [await node(), await node()];
    const ch = await chain([a, 44000], [b, 44000]);
    await expect(s.deps.db.transaction().execute((trx) => assertInboundFitsChain(trx, ch.id, a))).resolves.toBeUndefined();
    await expect(s.deps.db.transaction().execute((trx) => assertInboundFitsChain(trx, ch.id, b))).rejects.toMatchObject({
      type: 'validation',
      errors: { chain_id: `chain ${ch.id} starts at node ${a}, not at node ${b}` },
    });
    await expect(s.deps.db.transaction().execute((trx) => assertInboundFitsChain(trx, 'chn_missing', a))).rejects.toMatchObject({
      type: 'validation',
      errors: { chain_id: 'no chain chn_missing' },
    });
  });
});

describe('roles: a viewer reads chains but changes nothing', () => {
  it('viewer: GET 200; POST, PATCH, DELETE 403, nothing written, nothing bumped', async () => {
    const [a, b] = [await node(), await node()];
    const ch = await chain([a, 45000], [b, 45000]);
    const before = await revisions([a, b]);
    expect((await s.api.get('/api/v1/chains', { token: viewer })).status).toBe(200);
    expect((await s.api.get(`/api/v1/chains/${ch.id}`, { token: viewer })).status).toBe(200);
    const writes = [
      await postChain({ name: uniq('v'), hops: hops([a, 45001], [b, 45001]) }, viewer),
      await s.api.patch(`/api/v1/chains/${ch.id}`, { hops: hops([b, 45002], [a, 45002]) }, { token: viewer }),
      await s.api.delete(`/api/v1/chains/${ch.id}`, { token: viewer }),
    ];
    for (const res of writes) expect(res.status).toBe(403);
    expect(await revisions([a, b])).toEqual(before);
    expect((await auditOf(ch.id)).map((x) => x.action)).toEqual(['chain.created']);
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
