import { adminWithRole, OWNER, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let owner: { access_token: string; admin: { id: string } };
beforeAll(async () => {
  // A configured OAuth provider, so that its routes exist (an unconfigured one's are 404 before authentication).
  s = await startAdminApi({
    env: { SVC_AUTH_OAUTH_GOOGLE_CLIENT_ID: 'id', SVC_AUTH_OAUTH_GOOGLE_CLIENT_SECRET: 'secret' },
    config: { rate_limits: { login: { per_subject: { limit: 1000, window_seconds: 60 } } } },
  });
  owner = await setupOwner(s);
});
afterAll(() => s.stop());

interface Operation {
  method: string;
  path: string;
  roles?: string[];
  scope?: string;
}

async function operations(): Promise<Operation[]> {
  const doc = (await s.api.get('/api/v1/openapi.json')).body as { paths: Record<string, Record<string, Record<string, unknown>>> };
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      ops.push({
        method: method.toUpperCase(),
        path: path.replace('{id}', 'adm_doesnotexist').replace('{provider}', 'google'),
        roles: op['x-roles'] as string[] | undefined,
        scope: op['x-scope'] as string | undefined,
      });
    }
  }
  return ops;
}

describe('scope (spec 5.2): a token of the other surface is refused before any business logic', () => {
  it('a client-scope token gets 401 on every admin route, even with an invalid body', async () => {
    const client = await s.deps.tokens.signAccess({ sub: 'cli_someone', scope: 'client', sid: 'ses_x' });
    const protectedOps = (await operations()).filter((o) => o.scope === 'admin');
    expect(protectedOps.length).toBeGreaterThan(5);
    for (const op of protectedOps) {
      const res = await s.api.call(op.method, op.path, op.method === 'GET' ? undefined : { not: 'valid' }, { token: client.token });
      expect(res.status, `${op.method} ${op.path}`).toBe(401);
      expect(res.body.detail).toMatch(/scope admin/);
    }
  });

  it('a missing, malformed or forged token gets 401 with WWW-Authenticate', async () => {
    for (const header of [undefined, 'Basic abc', 'Bearer not.a.jwt', `Bearer ${owner.access_token.slice(0, -4)}AAAA`]) {
      const res = await s.api.get('/api/v1/auth/me', { headers: header ? { authorization: header } : {} });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
    const audit = await s.deps.db.selectFrom('audit_log').select('action').where('action', '=', 'auth.token_rejected').execute();
    expect(audit.length).toBeGreaterThanOrEqual(4);
  });
});

describe('roles (spec 5.4) declared on each route', () => {
  it('every admin route declares its roles in the OpenAPI document', async () => {
    for (const op of (await operations()).filter((o) => o.scope === 'admin')) {
      expect(op.roles, `${op.method} ${op.path}`).toBeDefined();
    }
  });

  it('a viewer gets 403 on every write not open to viewers (logout and their own OAuth identities are)', async () => {
    const viewer = await adminWithRole(s, owner.access_token, 'viewer');
    const writes = (await operations()).filter((o) => o.scope === 'admin' && o.method !== 'GET' && !o.roles?.includes('viewer'));
    expect(writes.length).toBeGreaterThanOrEqual(3);
    // Refusals are audited up to 60 per address and minute: a fresh minute for each 60.
    for (const [i, op] of writes.entries()) {
      if (i % 60 === 0) s.clock.advance(61_000);
      const body = { email: 'x@example.com', role: 'viewer', password: 'password-123' };
      const res = await s.api.call(op.method, op.path, op.method === 'DELETE' ? undefined : body, { token: viewer.access_token });
      expect(res.status, `${op.method} ${op.path}`).toBe(403);
    }
    expect((await s.api.get('/api/v1/audit-log', { token: viewer.access_token })).status).toBe(200);
    expect((await s.api.get('/api/v1/auth/me', { token: viewer.access_token })).status).toBe(200);
    const forbidden = await s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'auth.forbidden')
      .where('actor_id', '=', viewer.admin.id)
      .execute();
    expect(forbidden.length).toBe(writes.length);
  });

  it('managing admins is for owners only: an admin gets 403 on /admins', async () => {
    const admin = await adminWithRole(s, owner.access_token, 'admin');
    expect((await s.api.get('/api/v1/admins', { token: admin.access_token })).status).toBe(403);
    expect((await s.api.post('/api/v1/admins', { email: 'n@example.com', role: 'viewer' }, { token: admin.access_token })).status).toBe(
      403,
    );
    expect((await s.api.get('/api/v1/audit-log', { token: admin.access_token })).status).toBe(200);
  });
});

// The admin rules (the last owner, owner powers re-read on every change, sessions ended by a
// password change or a deletion, audit) are proven on the use cases:
// packages/domain-tests/test/admins.
describe('admins resource over HTTP (owner only)', () => {
  it('POST is 201, GET 200, PATCH (merge) 200, DELETE 204, then GET is 404', async () => {
    const created = await s.api.post(
      '/api/v1/admins',
      { email: 'Ops@Example.com', password: 'ops-password-1', role: 'admin' },
      { token: owner.access_token },
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email: 'ops@example.com', role: 'admin', has_password: true });
    const id = created.body.id as string;
    expect(id).toMatch(/^adm_/);

    expect((await s.api.get(`/api/v1/admins/${id}`, { token: owner.access_token })).body.email).toBe('ops@example.com');
    const patched = await s.api.patch(`/api/v1/admins/${id}`, { role: 'viewer' }, { token: owner.access_token });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ email: 'ops@example.com', role: 'viewer', has_password: true });

    expect((await s.api.delete(`/api/v1/admins/${id}`, { token: owner.access_token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/admins/${id}`, { token: owner.access_token })).status).toBe(404);
  });

  it('an email already taken is 409 problem+json naming email', async () => {
    const res = await s.api.post('/api/v1/admins', { email: OWNER.email.toUpperCase(), role: 'admin' }, { token: owner.access_token });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('urn:svc:problem:conflict');
    expect(res.body.errors.email).toBeDefined();
  });

  it('a body the input rules refuse is 400 with errors per field', async () => {
    const unknown = await s.api.patch(`/api/v1/admins/${owner.admin.id}`, { rolee: 'admin' }, { token: owner.access_token });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toHaveProperty(['(body)']);
    const weak = await s.api.post(
      '/api/v1/admins',
      { email: 'weak@example.com', password: 'short', role: 'god' },
      { token: owner.access_token },
    );
    expect(weak.status).toBe(400);
    expect(weak.body.errors).toEqual({ password: 'must be at least 8 characters', role: expect.any(String) });
  });
});
