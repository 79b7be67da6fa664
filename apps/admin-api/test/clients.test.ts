import { randomBytes } from 'node:crypto';
import { withActor } from '@svc/domain';
import { adminWithRole, type Fixtures, fixtures, setupOwner, TEST_OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// HTTP concerns of /clients: status codes, problem documents, field errors, pages and filters,
// roles. The rules (state machine, sessions, revisions, audit) are proven on the use cases in
// packages/domain-tests/test/clients.

let s: TestServer;
let token: string;
let make: Fixtures;
beforeAll(async () => {
  s = await startAdminApi({ config: { rate_limits: { login: { per_subject: { limit: 1000, window_seconds: 60 } } } } });
  token = (await setupOwner(s)).access_token;
  make = fixtures(withActor(s.deps, TEST_OWNER));
});
afterAll(() => s.stop());

const uniq = () => randomBytes(5).toString('hex');
const api = {
  create: (body: Record<string, unknown>) => s.api.post('/api/v1/clients', body, { token }),
  get: (id: string) => s.api.get(`/api/v1/clients/${id}`, { token }),
  patch: (id: string, body: Record<string, unknown>) => s.api.patch(`/api/v1/clients/${id}`, body, { token }),
  del: (id: string) => s.api.delete(`/api/v1/clients/${id}`, { token }),
  approve: (id: string) => s.api.post(`/api/v1/clients/${id}/approve`, undefined, { token }),
  reject: (id: string) => s.api.post(`/api/v1/clients/${id}/reject`, undefined, { token }),
};

describe('POST /clients', () => {
  it('answers 201 with the client view: every field, never the password hash; GET answers the same', async () => {
    const res = await api.create({ email: `New-${uniq()}@Example.COM`, password: 'client-password-1', note: 'vip' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'active', has_password: true, note: 'vip' });
    expect(Object.keys(res.body).sort()).toEqual(
      ['created_at', 'email', 'email_verified_at', 'has_password', 'id', 'note', 'status', 'updated_at'].sort(),
    );
    expect(res.text).not.toMatch(/argon2/);
    expect((await api.get(res.body.id)).body).toEqual(res.body);
  });

  it('an email already taken is a 409 conflict problem with errors.email', async () => {
    const c = await make.client();
    const res = await api.create({ email: c.email.toUpperCase() });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('urn:svc:problem:conflict');
    expect(res.body.errors.email).toBeDefined();
  });

  it('a bad body is a 400 problem naming each field: email, password policy, note length, unknown fields', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ email: 'not-an-email' }, 'email'],
      [{}, 'email'],
      [{ email: `p-${uniq()}@example.com`, password: 'short' }, 'password'],
      [{ email: `p-${uniq()}@example.com`, password: 'x'.repeat(1025) }, 'password'],
      [{ email: `p-${uniq()}@example.com`, note: 'n'.repeat(2001) }, 'note'],
      [{ email: `p-${uniq()}@example.com`, status: 'pending' }, '(body)'],
    ];
    for (const [body, field] of cases) {
      const res = await api.create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(Object.keys(res.body.errors), JSON.stringify(body)).toContain(field);
    }
  });
});

describe('GET /clients: keyset pages and filters', () => {
  it('walks every client exactly once, oldest first, across pages', async () => {
    for (let i = 0; i < 12; i++) await make.client();
    const all = await s.deps.db.selectFrom('clients').select('id').orderBy('id').execute();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/api/v1/clients?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await s.api.get(q, { token });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(5);
      seen.push(...res.body.items.map((c: { id: string }) => c.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((r) => r.id));
  });

  it('status=pending is the application queue; every status filters; an unknown status is a 400', async () => {
    const pending = (await make.client({ status: 'pending' })).id;
    const rejected = (await make.client({ status: 'rejected' })).id;
    const disabled = (await make.client({ status: 'disabled' })).id;
    const active = await make.client();
    const ids = async (status: string) =>
      (await s.api.get(`/api/v1/clients?status=${status}&limit=200`, { token })).body.items.map((c: { id: string; status: string }) => {
        expect(c.status).toBe(status);
        return c.id;
      });
    expect(await ids('pending')).toContain(pending);
    expect(await ids('rejected')).toEqual([rejected]);
    expect(await ids('disabled')).toEqual([disabled]);
    const act = await ids('active');
    expect(act).toContain(active.id);
    expect(act).not.toContain(pending);
    expect((await s.api.get('/api/v1/clients?status=banned', { token })).body.errors['query.status']).toBeDefined();
  });

  it('email filters by exact address, case-insensitively', async () => {
    const c = await make.client();
    const res = await s.api.get(`/api/v1/clients?email=${encodeURIComponent(c.email.toUpperCase())}`, { token });
    expect(res.body.items.map((x: { id: string }) => x.id)).toEqual([c.id]);
    expect((await s.api.get('/api/v1/clients?email=nobody%40example.com', { token })).body.items).toEqual([]);
  });

  it('an unknown id is 404 problem+json', async () => {
    const res = await api.get('cli_doesnotexist');
    expect(res.status).toBe(404);
    expect(res.body.type).toBe('urn:svc:problem:not-found');
  });
});

describe('PATCH /clients/{id}', () => {
  it('answers 200 with the merged view', async () => {
    const c = await make.client({ note: 'first' });
    const res = await api.patch(c.id, { status: 'disabled' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: c.id, email: c.email, note: 'first', status: 'disabled' });
  });

  it('a status move the state machine refuses is a 409 conflict problem with errors.status', async () => {
    const pending = await make.client({ status: 'pending' });
    const res = await api.patch(pending.id, { status: 'active' });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('urn:svc:problem:conflict');
    expect(res.body.errors.status).toBeDefined();
  });

  it('refuses statuses other than active|disabled, unknown fields and bad values with errors per field; 404 for an unknown id', async () => {
    const c = await make.client();
    for (const [body, field] of [
      [{ status: 'pending' }, 'status'],
      [{ status: 'rejected' }, 'status'],
      [{ email: 'nope' }, 'email'],
      [{ password: 'short' }, 'password'],
      [{ emaill: 'x@example.com' }, '(body)'],
    ] as const) {
      const res = await api.patch(c.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
    expect((await api.patch('cli_doesnotexist', { note: 'x' })).status).toBe(404);
  });
});

describe('POST /clients/{id}/approve and /reject', () => {
  it('answer 200 with the client view', async () => {
    const a = await make.client({ status: 'pending' });
    const r = await make.client({ status: 'pending' });
    const approved = await api.approve(a.id);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: a.id, status: 'active' });
    const rejected = await api.reject(r.id);
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ id: r.id, status: 'rejected' });
  });

  it('spec 3.1 rule 3: a rejected client can be approved after all (rejected -> active), not rejected twice', async () => {
    const r = await make.client({ status: 'pending' });
    expect((await api.reject(r.id)).status).toBe(200);
    expect((await api.reject(r.id)).status).toBe(409);
    const approved = await api.approve(r.id);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: r.id, status: 'active' });
  });

  it('a client that is not pending is a 409 conflict problem; an unknown id is a 404', async () => {
    const active = await make.client();
    for (const call of [api.approve, api.reject]) {
      const res = await call(active.id);
      expect(res.status).toBe(409);
      expect(res.body.type).toBe('urn:svc:problem:conflict');
      expect((await call('cli_doesnotexist')).status).toBe(404);
    }
  });
});

describe('DELETE /clients/{id}', () => {
  it('answers 204, then 404', async () => {
    const c = await make.client();
    expect((await api.del(c.id)).status).toBe(204);
    expect((await api.get(c.id)).status).toBe(404);
    expect((await api.del(c.id)).status).toBe(404);
  });

  it('is a 409 problem while the client has subscriptions, naming them in blocked_by', async () => {
    const c = await make.client();
    const sub = await make.subscription({ client_id: c.id });
    const res = await api.del(c.id);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/subscriptions/);
    expect(res.body.blocked_by).toEqual({ subscriptions: [sub.id] });
  });
});

describe('roles: a viewer reads clients but changes nothing', () => {
  it('viewer gets 200 on reads and 403 on every write', async () => {
    const viewer = (await adminWithRole(s, token, 'viewer')).access_token;
    const c = await make.client();
    const pending = (await make.client({ status: 'pending' })).id;
    expect((await s.api.get('/api/v1/clients', { token: viewer })).status).toBe(200);
    expect((await s.api.get(`/api/v1/clients/${c.id}`, { token: viewer })).status).toBe(200);
    const writes = [
      s.api.post('/api/v1/clients', { email: `v-${uniq()}@example.com` }, { token: viewer }),
      s.api.patch(`/api/v1/clients/${c.id}`, { status: 'disabled' }, { token: viewer }),
      s.api.delete(`/api/v1/clients/${c.id}`, { token: viewer }),
      s.api.post(`/api/v1/clients/${pending}/approve`, undefined, { token: viewer }),
      s.api.post(`/api/v1/clients/${pending}/reject`, undefined, { token: viewer }),
    ];
    for (const res of await Promise.all(writes)) expect(res.status).toBe(403);
    expect((await api.get(c.id)).body.status).toBe('active');
    expect((await api.get(pending)).body.status).toBe('pending');
  });

  it('a change over HTTP is audited as the admin whose token made it', async () => {
    const res = await api.create({ email: `a-${uniq()}@example.com` });
    const entry = await s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('entity_id', '=', res.body.id)
      .where('action', '=', 'client.created')
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({ actor_type: 'admin', entity_type: 'client' });
    expect(entry.actor_id).toMatch(/^adm_/);
    expect(entry.actor_id).not.toBe(TEST_OWNER.id);
  });
});
