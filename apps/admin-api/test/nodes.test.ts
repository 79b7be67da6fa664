import { createHash, X509Certificate } from 'node:crypto';
import { type ApiResponse, adminWithRole, setupOwner, startTestServer, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApi } from '../src/app.ts';
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

async function createNode(over: Record<string, unknown> = {}) {
  const res = await s.api.post('/api/v1/nodes', { name: uniq('node'), address: `n${seq}.example.net`, ...over }, { token });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; address: string; desired_revision: number };
}

async function revisions(ids: string[]): Promise<Record<string, number>> {
  const rows = await s.deps.db.selectFrom('nodes').select(['id', 'desired_revision']).where('id', 'in', ids).execute();
  return Object.fromEntries(rows.map((r) => [r.id, Number(r.desired_revision)]));
}

/** An inbound on `nodeId` inserted as rows (the inbounds API is another feature). */
async function insertInbound(nodeId: string, port: number, chainId: string | null = null): Promise<string> {
  const now = s.clock.now();
  const profileId = `ipr_${uniq('p')}`;
  await s.deps.db
    .insertInto('inbound_profiles')
    .values({
      id: profileId,
      name: profileId,
      protocol: 'vless',
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

describe('POST /nodes and GET /nodes/{id}', () => {
  it('creates an enabled, offline node at revision 1 with nothing reported yet, and reads it back', async () => {
    const res = await s.api.post('/api/v1/nodes', { name: ' fra-1 ', address: 'FRA-1.Example.NET.' }, { token });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'fra-1',
      address: 'fra-1.example.net',
      admin_status: 'enabled',
      connectivity: 'offline',
      desired_revision: 1,
      applied_revision: 0,
      last_apply_error: null,
      last_seen_at: null,
      agent_version: null,
      xray_version: null,
      hostname: null,
      os: null,
      arch: null,
      status: null,
      enroll_token_expires_at: null,
      created_at: s.clock.now().toISOString(),
      updated_at: s.clock.now().toISOString(),
    });
    expect(res.body.id).toMatch(/^nod_[0-9a-z]{26}$/);
    const got = await s.api.get(`/api/v1/nodes/${res.body.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('accepts IPv4 and IPv6 literals as address (IPv6 stored without brackets)', async () => {
    expect((await createNode({ address: '203.0.113.7' })).address).toBe('203.0.113.7');
    expect((await createNode({ address: '2001:DB8::1' })).address).toBe('2001:db8::1');
    expect((await createNode({ address: '[2001:db8::2]' })).address).toBe('2001:db8::2');
    expect((await createNode({ address: 'localhost' })).address).toBe('localhost');
  });

  it('shows the stored status report (snake_case) and agent facts in the view', async () => {
    const node = await createNode();
    const status = { uptime_seconds: 42, cpu_percent: 3.5, xray_running: true, inbounds: [{ tag: 'a', users: 2 }] };
    const seen = new Date('2026-11-21T10:00:00.000Z');
    await s.deps.db
      .updateTable('nodes')
      .set({
        status: JSON.stringify(status),
        agent_version: '1.2.3',
        xray_version: '25.1.1',
        hostname: 'fra-host',
        os: 'linux',
        arch: 'amd64',
        last_seen_at: seen,
        applied_revision: 1,
        last_apply_error: 'bad port',
        connectivity: 'online',
      })
      .where('id', '=', node.id)
      .execute();
    const got = await s.api.get(`/api/v1/nodes/${node.id}`, { token });
    expect(got.body).toMatchObject({
      status,
      agent_version: '1.2.3',
      xray_version: '25.1.1',
      hostname: 'fra-host',
      os: 'linux',
      arch: 'amd64',
      last_seen_at: seen.toISOString(),
      applied_revision: 1,
      last_apply_error: 'bad port',
      connectivity: 'online',
    });
  });

  it('refuses invalid fields with 400 and an error per field', async () => {
    const missing = await s.api.post('/api/v1/nodes', {}, { token });
    expect(missing.status).toBe(400);
    expect(missing.body.type).toBe('urn:svc:problem:validation');
    expect(Object.keys(missing.body.errors).sort()).toEqual(['address', 'name']);

    for (const name of ['', '   ', 'x'.repeat(65)]) {
      const res = await s.api.post('/api/v1/nodes', { name, address: 'ok.example.net' }, { token });
      expect(res.status, name).toBe(400);
      expect(res.body.errors.name, name).toBeDefined();
    }
    for (const address of [
      '',
      'https://node.example.net',
      'node.example.net:443',
      'node example.net',
      '-bad.example.net',
      'bad-.example.net',
      'a..b',
      '999.1.1.1',
      '1.2.3',
      '[203.0.113.1]',
      `${'a'.repeat(64)}.example.net`,
      'node_1.example.net',
      '2001:db8::zz',
    ]) {
      const res = await s.api.post('/api/v1/nodes', { name: uniq('bad'), address }, { token });
      expect(res.status, address).toBe(400);
      expect(res.body.errors.address, address).toBeDefined();
    }
  });

  it('a taken name is a 409 naming the field', async () => {
    const a = await createNode();
    const res = await s.api.post('/api/v1/nodes', { name: a.name, address: 'other.example.net' }, { token });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('urn:svc:problem:conflict');
    expect(res.body.errors.name).toBe('already taken');
  });

  it('an unknown node is a 404 problem', async () => {
    const res = await s.api.get('/api/v1/nodes/nod_doesnotexist', { token });
    expect(res.status).toBe(404);
    expect(res.body.type).toBe('urn:svc:problem:not-found');
  });

  it('creating a node is audited with the actor', async () => {
    const node = await createNode({ name: uniq('audited'), address: '198.51.100.9' });
    const audit = await auditOf(node.id);
    expect(audit.map((a) => a.action)).toEqual(['node.created']);
    expect(audit[0]).toMatchObject({ actor_type: 'admin', actor_id: ownerId, entity_type: 'node' });
    expect(audit[0]?.details).toEqual({ name: node.name, address: '198.51.100.9' });
  });
});

describe('GET /nodes: keyset pages and filters', () => {
  it('walks every node exactly once, oldest first, in pages of any size', async () => {
    for (let i = 0; i < 23; i++) await createNode();
    const all = await pageAll('/api/v1/nodes', 200);
    expect(all.length).toBeGreaterThanOrEqual(23);
    expect([...all].sort()).toEqual(all);
    for (const limit of [1, 7]) expect(await pageAll('/api/v1/nodes', limit)).toEqual(all);
  });

  it('filters by admin_status and by connectivity, alone and together', async () => {
    const a = await createNode();
    const b = await createNode();
    const c = await createNode();
    expect((await s.api.patch(`/api/v1/nodes/${a.id}`, { admin_status: 'disabled' }, { token })).status).toBe(200);
    expect((await s.api.patch(`/api/v1/nodes/${b.id}`, { admin_status: 'disabled' }, { token })).status).toBe(200);
    await s.deps.db.updateTable('nodes').set({ connectivity: 'online' }).where('id', 'in', [b.id, c.id]).execute();

    const rows = await s.deps.db.selectFrom('nodes').select(['id', 'admin_status', 'connectivity']).orderBy('id').execute();
    const expectIds = (pred: (r: (typeof rows)[number]) => boolean) => rows.filter(pred).map((r) => r.id);

    expect(await pageAll('/api/v1/nodes?admin_status=disabled', 2)).toEqual(expectIds((r) => r.admin_status === 'disabled'));
    expect(await pageAll('/api/v1/nodes?admin_status=enabled', 5)).toEqual(expectIds((r) => r.admin_status === 'enabled'));
    expect(await pageAll('/api/v1/nodes?connectivity=online', 1)).toEqual(expectIds((r) => r.connectivity === 'online'));
    expect(await pageAll('/api/v1/nodes?connectivity=offline', 9)).toEqual(expectIds((r) => r.connectivity === 'offline'));
    expect(await pageAll('/api/v1/nodes?admin_status=disabled&connectivity=online', 50)).toEqual([b.id]);
    expect(await pageAll('/api/v1/nodes?admin_status=enabled&connectivity=online', 50)).toContain(c.id);

    const bad = await s.api.get('/api/v1/nodes?admin_status=paused', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors['query.admin_status']).toBeDefined();
    expect((await s.api.get('/api/v1/nodes?connectivity=maybe', { token })).status).toBe(400);
    expect((await s.api.get('/api/v1/nodes?cursor=bm9wZQ', { token })).status).toBe(400);
  });
});

describe('PATCH /nodes/{id}', () => {
  it('merges: only the sent fields change, and the change is audited from/to', async () => {
    const node = await createNode({ address: 'before.example.net' });
    s.clock.advance(1000);
    const res = await s.api.patch(`/api/v1/nodes/${node.id}`, { name: 'renamed-node' }, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'renamed-node', address: 'before.example.net', admin_status: 'enabled' });
    expect(res.body.updated_at).toBe(s.clock.now().toISOString());
    expect(res.body.created_at).not.toBe(res.body.updated_at);

    const res2 = await s.api.patch(`/api/v1/nodes/${node.id}`, { address: '192.0.2.10', admin_status: 'disabled' }, { token });
    expect(res2.body).toMatchObject({ name: 'renamed-node', address: '192.0.2.10', admin_status: 'disabled' });
    expect((await s.api.get(`/api/v1/nodes/${node.id}`, { token })).body).toEqual(res2.body);

    const audit = (await auditOf(node.id)).filter((a) => a.action === 'node.updated');
    expect(audit).toHaveLength(2);
    expect(audit[0]?.details).toMatchObject({ changed: ['name'], name: { from: node.name, to: 'renamed-node' } });
    expect(audit[1]?.details).toMatchObject({
      changed: ['address', 'admin_status'],
      address: { from: 'before.example.net', to: '192.0.2.10' },
      admin_status: { from: 'enabled', to: 'disabled' },
    });
  });

  it('refuses unknown fields, invalid values, a taken name (409) and unknown nodes (404)', async () => {
    const a = await createNode();
    const b = await createNode();
    const unknown = await s.api.patch(`/api/v1/nodes/${a.id}`, { desired_revision: 9 }, { token });
    expect(unknown.status).toBe(400);
    const bad = await s.api.patch(`/api/v1/nodes/${a.id}`, { address: 'not a host', admin_status: 'off' }, { token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.admin_status).toBeDefined();
    const badAddress = await s.api.patch(`/api/v1/nodes/${a.id}`, { address: 'ftp://x' }, { token });
    expect(badAddress.status).toBe(400);
    expect(badAddress.body.errors.address).toBeDefined();
    const taken = await s.api.patch(`/api/v1/nodes/${a.id}`, { name: b.name }, { token });
    expect(taken.status).toBe(409);
    expect(taken.body.errors.name).toBe('already taken');
    expect((await s.api.patch(`/api/v1/nodes/${a.id}`, { name: a.name }, { token })).status).toBe(200);
    expect((await s.api.patch('/api/v1/nodes/nod_missing', { name: 'x' }, { token })).status).toBe(404);
  });

  it('a new address bumps exactly the nodes that dial it (the previous hop of each of its chains)', async () => {
    const [a, b, c, d, e] = [await createNode(), await createNode(), await createNode(), await createNode(), await createNode()];
    // a -> b -> c, and e -> b: a and e dial b; b dials c; d is unrelated.
    expect(
      (
        await s.api.post(
          '/api/v1/chains',
          {
            name: uniq('chain'),
            hops: [
              { node_id: a.id, port: 20001 },
              { node_id: b.id, port: 20001 },
              { node_id: c.id, port: 20001 },
            ],
          },
          { token },
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await s.api.post(
          '/api/v1/chains',
          {
            name: uniq('chain'),
            hops: [
              { node_id: e.id, port: 20002 },
              { node_id: b.id, port: 20002 },
            ],
          },
          { token },
        )
      ).status,
    ).toBe(201);
    const ids = [a.id, b.id, c.id, d.id, e.id];
    const before = await revisions(ids);

    expect((await s.api.patch(`/api/v1/nodes/${b.id}`, { name: uniq('renamed'), admin_status: 'disabled' }, { token })).status).toBe(200);
    expect(await revisions(ids)).toEqual(before);

    expect((await s.api.patch(`/api/v1/nodes/${b.id}`, { address: 'moved.example.net' }, { token })).status).toBe(200);
    expect(await revisions(ids)).toEqual({ ...before, [a.id]: before[a.id]! + 1, [e.id]: before[e.id]! + 1 });

    // The same address again changes nothing.
    expect((await s.api.patch(`/api/v1/nodes/${b.id}`, { address: 'moved.example.net' }, { token })).status).toBe(200);
    expect(await revisions(ids)).toEqual({ ...before, [a.id]: before[a.id]! + 1, [e.id]: before[e.id]! + 1 });

    // The head of a chain is dialed by nobody.
    expect((await s.api.patch(`/api/v1/nodes/${a.id}`, { address: '192.0.2.77' }, { token })).status).toBe(200);
    expect(await revisions(ids)).toEqual({ ...before, [a.id]: before[a.id]! + 1, [e.id]: before[e.id]! + 1 });

    // Re-enabling bumps the node itself (its agent gets a complete snapshot); enabling an enabled node does not.
    expect((await s.api.patch(`/api/v1/nodes/${b.id}`, { admin_status: 'enabled' }, { token })).status).toBe(200);
    const reenabled = { ...before, [a.id]: before[a.id]! + 1, [e.id]: before[e.id]! + 1, [b.id]: before[b.id]! + 1 };
    expect(await revisions(ids)).toEqual(reenabled);
    expect((await s.api.patch(`/api/v1/nodes/${b.id}`, { admin_status: 'enabled' }, { token })).status).toBe(200);
    expect(await revisions(ids)).toEqual(reenabled);
  });
});

describe('DELETE /nodes/{id}', () => {
  it('deletes an unused node (204, then 404) and audits it', async () => {
    const node = await createNode();
    const res = await s.api.delete(`/api/v1/nodes/${node.id}`, { token });
    expect(res.status).toBe(204);
    expect((await s.api.get(`/api/v1/nodes/${node.id}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/nodes/${node.id}`, { token })).status).toBe(404);
    const audit = await auditOf(node.id);
    expect(audit.map((a) => a.action)).toEqual(['node.created', 'node.deleted']);
    expect(audit[1]).toMatchObject({ actor_id: ownerId, entity_type: 'node' });
  });

  it('a hop of a chain is refused with 409 naming the chains (spec 4.4, 7.2)', async () => {
    const a = await createNode();
    const b = await createNode();
    const chain = await s.api.post(
      '/api/v1/chains',
      {
        name: uniq('chain'),
        hops: [
          { node_id: a.id, port: 21000 },
          { node_id: b.id, port: 21000 },
        ],
      },
      { token },
    );
    expect(chain.status).toBe(201);
    for (const id of [a.id, b.id]) {
      const res = await s.api.delete(`/api/v1/nodes/${id}`, { token });
      expect(res.status).toBe(409);
      expect(res.body.type).toBe('urn:svc:problem:conflict');
      expect(res.body.detail).toMatch(/chain/);
      expect(res.body.blocked_by).toEqual({ chains: [chain.body.id] });
    }
    expect((await s.api.get(`/api/v1/nodes/${a.id}`, { token })).status).toBe(200);
    // Once the chain is gone the node can go.
    expect((await s.api.delete(`/api/v1/chains/${chain.body.id}`, { token })).status).toBe(204);
    expect((await s.api.delete(`/api/v1/nodes/${a.id}`, { token })).status).toBe(204);
  });

  it('a node still running inbounds is refused with 409 naming them; both blockers are named together', async () => {
    const a = await createNode();
    const b = await createNode();
    const i1 = await insertInbound(a.id, 443);
    const i2 = await insertInbound(a.id, 8443);
    const res = await s.api.delete(`/api/v1/nodes/${a.id}`, { token });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/inbound/);
    expect(res.body.blocked_by).toEqual({ inbounds: [i1, i2].sort() });

    const chain = await s.api.post(
      '/api/v1/chains',
      {
        name: uniq('chain'),
        hops: [
          { node_id: a.id, port: 22000 },
          { node_id: b.id, port: 22000 },
        ],
      },
      { token },
    );
    const both = await s.api.delete(`/api/v1/nodes/${a.id}`, { token });
    expect(both.status).toBe(409);
    expect(both.body.blocked_by).toEqual({ chains: [chain.body.id], inbounds: [i1, i2].sort() });
    expect((await auditOf(a.id)).map((x) => x.action)).not.toContain('node.deleted');
  });
});

describe('POST /nodes/{id}/enroll-token', () => {
  const sha256 = (t: string) => createHash('sha256').update(t).digest('hex');

  it('issues a 32-byte base64url token valid 24 h, stores only its hash, and audits without it', async () => {
    const node = await createNode();
    const res = await s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token });
    expect(res.status).toBe(201);
    expect(res.body.node_id).toBe(node.id);
    expect(res.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(res.body.token, 'base64url')).toHaveLength(32);
    const expires = new Date(s.clock.now().getTime() + 24 * 3600 * 1000).toISOString();
    expect(res.body.expires_at).toBe(expires);

    const row = await s.deps.db.selectFrom('nodes').selectAll().where('id', '=', node.id).executeTakeFirstOrThrow();
    expect(row.enroll_token_hash).toBe(sha256(res.body.token));
    expect(row.enroll_token_expires_at?.toISOString()).toBe(expires);
    const view = await s.api.get(`/api/v1/nodes/${node.id}`, { token });
    expect(view.body.enroll_token_expires_at).toBe(expires);
    expect(view.text).not.toContain(res.body.token);
    expect(view.text).not.toContain(row.enroll_token_hash);

    const audit = (await auditOf(node.id)).filter((a) => a.action === 'node.enroll_token_issued');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_id: ownerId, entity_type: 'node' });
    expect(JSON.stringify(audit[0]?.details)).not.toContain(res.body.token);
    expect(JSON.stringify(audit[0]?.details)).not.toContain(row.enroll_token_hash);
  });

  it('returns what an agent needs for its first connection: the gateway endpoint and the CA that pins it', async () => {
    const node = await createNode();
    const res = await s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token });
    expect(res.body.grpc_endpoint).toBe('localhost:8443');
    const ca = new X509Certificate(res.body.ca_cert_pem);
    expect(ca.ca).toBe(true);
    expect(res.body.ca_cert_sha256).toBe(createHash('sha256').update(ca.raw).digest('hex'));
    const stored = await s.deps.db.selectFrom('certificate_authority').select('cert_pem').executeTakeFirstOrThrow();
    expect(res.body.ca_cert_pem).toBe(stored.cert_pem);
  });

  it('SVC_ENROLL_TOKEN_TTL_SECONDS and SVC_GRPC_PUBLIC_ENDPOINT shape the token (issue 4: TTL configurable)', async () => {
    const other = await startTestServer({
      mount: (root) => root.route('/', createAdminApi()),
      env: { SVC_ENROLL_TOKEN_TTL_SECONDS: '600', SVC_GRPC_PUBLIC_ENDPOINT: 'cp.example.com:443' },
    });
    try {
      const t = (await setupOwner(other)).access_token;
      const n = (await other.api.post('/api/v1/nodes', { name: 'ttl', address: 'ttl.example.com' }, { token: t })).body;
      const res = await other.api.post(`/api/v1/nodes/${n.id}/enroll-token`, undefined, { token: t });
      expect(res.body.expires_at).toBe(new Date(other.clock.now().getTime() + 600_000).toISOString());
      expect(res.body.grpc_endpoint).toBe('cp.example.com:443');
    } finally {
      await other.stop();
    }
  });

  it('re-issuing replaces the token: the old hash is gone, the expiry restarts', async () => {
    const node = await createNode();
    const first = await s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token });
    s.clock.advance(5 * 60 * 1000); // less than the access token's 15 minutes
    const second = await s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token });
    expect(second.status).toBe(201);
    expect(second.body.token).not.toBe(first.body.token);
    expect(new Date(second.body.expires_at).getTime() - new Date(first.body.expires_at).getTime()).toBe(5 * 60 * 1000);
    const row = await s.deps.db.selectFrom('nodes').selectAll().where('id', '=', node.id).executeTakeFirstOrThrow();
    expect(row.enroll_token_hash).toBe(sha256(second.body.token));
    const byOld = await s.deps.db.selectFrom('nodes').select('id').where('enroll_token_hash', '=', sha256(first.body.token)).execute();
    expect(byOld).toEqual([]);
    const audit = (await auditOf(node.id)).filter((a) => a.action === 'node.enroll_token_issued');
    expect(audit.map((a) => a.details?.replaced_previous)).toEqual([false, true]);
  });

  it('an unknown node is a 404; the node revision does not move', async () => {
    expect((await s.api.post('/api/v1/nodes/nod_missing/enroll-token', undefined, { token })).status).toBe(404);
    const node = await createNode();
    await s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token });
    expect(await revisions([node.id])).toEqual({ [node.id]: 1 });
  });
});

describe('roles: a viewer reads nodes but changes nothing', () => {
  it('viewer: GET 200; POST, PATCH, DELETE, enroll-token 403 and nothing changes', async () => {
    const node = await createNode();
    expect((await s.api.get('/api/v1/nodes', { token: viewer })).status).toBe(200);
    expect((await s.api.get(`/api/v1/nodes/${node.id}`, { token: viewer })).status).toBe(200);
    const writes: ApiResponse[] = [
      await s.api.post('/api/v1/nodes', { name: uniq('v'), address: 'v.example.net' }, { token: viewer }),
      await s.api.patch(`/api/v1/nodes/${node.id}`, { name: uniq('v') }, { token: viewer }),
      await s.api.delete(`/api/v1/nodes/${node.id}`, { token: viewer }),
      await s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token: viewer }),
    ];
    for (const res of writes) {
      expect(res.status).toBe(403);
      expect(res.body.type).toBe('urn:svc:problem:forbidden');
    }
    const row = await s.deps.db.selectFrom('nodes').selectAll().where('id', '=', node.id).executeTakeFirstOrThrow();
    expect(row.name).toBe(node.name);
    expect(row.enroll_token_hash).toBeNull();
    expect((await auditOf(node.id)).map((a) => a.action)).toEqual(['node.created']);
    expect((await s.api.get('/api/v1/nodes')).status).toBe(401);
  });
});

describe('OpenAPI document', () => {
  it('declares every node operation with its schemas and roles', async () => {
    const { paths, components } = (await s.api.get('/api/v1/openapi.json')).body;
    const ops: Array<[string, string, string[]]> = [
      ['/api/v1/nodes', 'get', ['owner', 'admin', 'viewer']],
      ['/api/v1/nodes', 'post', ['owner', 'admin']],
      ['/api/v1/nodes/{id}', 'get', ['owner', 'admin', 'viewer']],
      ['/api/v1/nodes/{id}', 'patch', ['owner', 'admin']],
      ['/api/v1/nodes/{id}', 'delete', ['owner', 'admin']],
      ['/api/v1/nodes/{id}/enroll-token', 'post', ['owner', 'admin']],
    ];
    for (const [path, method, roles] of ops) {
      const op = paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op['x-roles']).toEqual(roles);
      expect(op.responses['401'].content['application/problem+json']).toBeDefined();
    }
    expect(paths['/api/v1/nodes'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CreateNode');
    expect(paths['/api/v1/nodes/{id}'].patch.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/UpdateNode');
    expect(paths['/api/v1/nodes'].get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/NodePage');
    expect(Object.keys(components.schemas)).toEqual(
      expect.arrayContaining(['Node', 'NodePage', 'CreateNode', 'UpdateNode', 'NodeEnrollToken']),
    );
  });
});
