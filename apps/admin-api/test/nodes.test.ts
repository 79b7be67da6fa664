// HTTP concerns of /nodes: status codes, problem documents, roles, pages and filters, the
// OpenAPI document. What the use cases decide (revisions, conflicts, audit details, enrollment
// tokens) is proven in packages/domain-tests/test/nodes.
import { withActor } from '@svc/domain';
import { type ApiResponse, adminWithRole, type Fixtures, fixtures, pageAll, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
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

const walk = (path: string, limit: number, between?: (page: number) => Promise<void>) =>
  pageAll(s.api, path, { limit, token, ...(between ? { between } : {}) });

describe('POST /nodes and GET /nodes/{id}', () => {
  it('201 with the node as the body parsed it, audited as the admin of the token; GET answers the same', async () => {
    const res = await s.api.post('/api/v1/nodes', { name: ' fra-1 ', address: 'FRA-1.Example.NET.' }, { token });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'fra-1', address: 'fra-1.example.net', admin_status: 'enabled', desired_revision: 1 });
    expect(res.body.id).toMatch(/^nod_[0-9a-z]{26}$/);
    const got = await s.api.get(`/api/v1/nodes/${res.body.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    const audit = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', res.body.id).execute();
    expect(audit).toMatchObject([{ action: 'node.created', actor_type: 'admin', actor_id: ownerId }]);
  });

  it('shows the stored status report (snake_case) and agent facts in the view', async () => {
    const node = await f.node();
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

  it('a bad body is a 400 validation problem with an error per field', async () => {
    const missing = await s.api.post('/api/v1/nodes', {}, { token });
    expect(missing.status).toBe(400);
    expect(missing.body.type).toBe('urn:svc:problem:validation');
    expect(Object.keys(missing.body.errors).sort()).toEqual(['address', 'name']);
    const bad = await s.api.post('/api/v1/nodes', { name: '   ', address: 'https://node.example.net' }, { token });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['address', 'name']);
    expect((await s.api.post('/api/v1/nodes', { name: 'x', address: 'x.example.net', port: 1 }, { token })).status).toBe(400);
  });

  it('a taken name is a 409 conflict problem naming the field', async () => {
    const a = await f.node();
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
});

describe('GET /nodes: keyset pages and filters', () => {
  it('walks every node exactly once, oldest first, in pages of any size', async () => {
    for (let i = 0; i < 23; i++) await f.node();
    const all = await walk('/api/v1/nodes', 200);
    expect(all.length).toBeGreaterThanOrEqual(23);
    expect([...all].sort()).toEqual(all);
    for (const limit of [1, 7]) expect(await walk('/api/v1/nodes', limit)).toEqual(all);
  });

  it('filters by admin_status and by connectivity, alone and together', async () => {
    const a = await f.node();
    const b = await f.node();
    const c = await f.node();
    expect((await s.api.patch(`/api/v1/nodes/${a.id}`, { admin_status: 'disabled' }, { token })).status).toBe(200);
    expect((await s.api.patch(`/api/v1/nodes/${b.id}`, { admin_status: 'disabled' }, { token })).status).toBe(200);
    // Connectivity is what the gateway records; no admin use case sets it.
    await s.deps.db.updateTable('nodes').set({ connectivity: 'online' }).where('id', 'in', [b.id, c.id]).execute();

    const rows = await s.deps.db.selectFrom('nodes').select(['id', 'admin_status', 'connectivity']).orderBy('id').execute();
    const expectIds = (pred: (r: (typeof rows)[number]) => boolean) => rows.filter(pred).map((r) => r.id);

    expect(await walk('/api/v1/nodes?admin_status=disabled', 2)).toEqual(expectIds((r) => r.admin_status === 'disabled'));
    expect(await walk('/api/v1/nodes?admin_status=enabled', 5)).toEqual(expectIds((r) => r.admin_status === 'enabled'));
    expect(await walk('/api/v1/nodes?connectivity=online', 1)).toEqual(expectIds((r) => r.connectivity === 'online'));
    expect(await walk('/api/v1/nodes?connectivity=offline', 9)).toEqual(expectIds((r) => r.connectivity === 'offline'));
    expect(await walk('/api/v1/nodes?admin_status=disabled&connectivity=online', 50)).toEqual([b.id]);
    expect(await walk('/api/v1/nodes?admin_status=enabled&connectivity=online', 50)).toContain(c.id);

    const bad = await s.api.get('/api/v1/nodes?admin_status=paused', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors['query.admin_status']).toBeDefined();
    expect((await s.api.get('/api/v1/nodes?connectivity=maybe', { token })).status).toBe(400);
    expect((await s.api.get('/api/v1/nodes?cursor=bm9wZQ', { token })).status).toBe(400);
  });
});

describe('PATCH /nodes/{id}', () => {
  it('200 with the merged node; GET answers the same', async () => {
    const node = await f.node({ address: 'before.example.net' });
    const res = await s.api.patch(`/api/v1/nodes/${node.id}`, { address: '192.0.2.10', admin_status: 'disabled' }, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: node.name, address: '192.0.2.10', admin_status: 'disabled' });
    expect((await s.api.get(`/api/v1/nodes/${node.id}`, { token })).body).toEqual(res.body);
  });

  it('unknown fields and invalid values are 400 per field, a taken name 409, an unknown node 404', async () => {
    const a = await f.node();
    const b = await f.node();
    expect((await s.api.patch(`/api/v1/nodes/${a.id}`, { desired_revision: 9 }, { token })).status).toBe(400);
    const bad = await s.api.patch(`/api/v1/nodes/${a.id}`, { address: 'ftp://x', admin_status: 'off' }, { token });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['address', 'admin_status']);
    const taken = await s.api.patch(`/api/v1/nodes/${a.id}`, { name: b.name }, { token });
    expect(taken.status).toBe(409);
    expect(taken.body.errors.name).toBe('already taken');
    expect((await s.api.patch('/api/v1/nodes/nod_missing', { name: 'x' }, { token })).status).toBe(404);
  });
});

describe('DELETE /nodes/{id}', () => {
  it('204 for an unused node, then 404', async () => {
    const node = await f.node();
    expect((await s.api.delete(`/api/v1/nodes/${node.id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/nodes/${node.id}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/nodes/${node.id}`, { token })).status).toBe(404);
  });

  it('a node in use is a 409 conflict problem with blocked_by', async () => {
    const inbound = await f.inbound();
    const res = await s.api.delete(`/api/v1/nodes/${inbound.node_id}`, { token });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('urn:svc:problem:conflict');
    expect(res.body.detail).toMatch(/inbound/);
    expect(res.body.blocked_by).toEqual({ inbounds: [inbound.id] });
  });
});

describe('POST /nodes/{id}/enroll-token', () => {
  it('201 with the token, its expiry and what the agent connects to; GET shows the expiry, never the token or its hash', async () => {
    const node = await f.node();
    const res = await s.api.post(`/api/v1/nodes/${node.id}/enroll-token`, undefined, { token });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ node_id: node.id, grpc_endpoint: 'localhost:8443' });
    expect(res.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.body.ca_cert_pem).toContain('BEGIN CERTIFICATE');
    const view = await s.api.get(`/api/v1/nodes/${node.id}`, { token });
    expect(view.body.enroll_token_expires_at).toBe(res.body.expires_at);
    const row = await s.deps.db.selectFrom('nodes').select('enroll_token_hash').where('id', '=', node.id).executeTakeFirstOrThrow();
    expect(view.text).not.toContain(res.body.token);
    expect(view.text).not.toContain(row.enroll_token_hash);
    expect((await s.api.post('/api/v1/nodes/nod_missing/enroll-token', undefined, { token })).status).toBe(404);
  });
});

describe('roles: a viewer reads nodes but changes nothing', () => {
  it('viewer: GET 200; POST, PATCH, DELETE, enroll-token 403 and nothing changes', async () => {
    const node = await f.node();
    expect((await s.api.get('/api/v1/nodes', { token: viewer })).status).toBe(200);
    expect((await s.api.get(`/api/v1/nodes/${node.id}`, { token: viewer })).status).toBe(200);
    const writes: ApiResponse[] = [
      await s.api.post('/api/v1/nodes', { name: 'by-viewer', address: 'v.example.net' }, { token: viewer }),
      await s.api.patch(`/api/v1/nodes/${node.id}`, { name: 'by-viewer' }, { token: viewer }),
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
    const actions = await s.deps.db.selectFrom('audit_log').select('action').where('entity_id', '=', node.id).execute();
    expect(actions.map((a) => a.action)).toEqual(['node.created']);
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
