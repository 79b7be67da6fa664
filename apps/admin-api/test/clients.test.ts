import { randomBytes } from 'node:crypto';
import { adminWithRole, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
beforeAll(async () => {
  s = await startAdminApi({ config: { rate_limits: { login: { per_subject: { limit: 1000, window_seconds: 60 } } } } });
  token = (await setupOwner(s)).access_token;
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

async function newClient(extra: Record<string, unknown> = {}) {
  const res = await api.create({ email: `c-${uniq()}@example.com`, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; email: string; status: string };
}

/** A client as the portal's registration would leave it (that API does not exist yet). */
async function insertClient(status: 'pending' | 'active' | 'rejected' | 'disabled', verified = false) {
  const now = s.clock.now();
  const id = `cli_${uniq()}${uniq()}`;
  await s.deps.db
    .insertInto('clients')
    .values({
      id,
      email: `r-${uniq()}@example.com`,
      password_hash: null,
      email_verified_at: verified ? now : null,
      status,
      note: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

async function insertSession(clientId: string) {
  const now = s.clock.now();
  const id = `ses_${uniq()}`;
  await s.deps.db
    .insertInto('sessions')
    .values({
      id,
      subject_type: 'client',
      subject_id: clientId,
      method: 'password',
      ip: null,
      user_agent: null,
      created_at: now,
      expires_at: new Date(now.getTime() + 86_400_000),
      refreshed_at: null,
      revoked_at: null,
      revoked_reason: null,
    })
    .execute();
  return id;
}

/** node -> inbound -> access group, inserted directly (their APIs are built concurrently). */
async function fleetNode() {
  const now = s.clock.now();
  const db = s.deps.db;
  const node = `nod_${uniq()}`;
  await db
    .insertInto('nodes')
    .values({ id: node, name: node, address: `${node}.example.com`, created_at: now, updated_at: now })
    .execute();
  const profile = `ipr_${uniq()}`;
  await db
    .insertInto('inbound_profiles')
    .values({
      id: profile,
      name: profile,
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
  const inbound = `inb_${uniq()}`;
  await db
    .insertInto('inbounds')
    .values({
      id: inbound,
      node_id: node,
      profile_id: profile,
      tag: inbound,
      port: 443,
      listen: null,
      host: null,
      chain_id: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const group = `agr_${uniq()}`;
  await db.insertInto('access_groups').values({ id: group, name: group, created_at: now, updated_at: now }).execute();
  await db.insertInto('access_group_inbounds').values({ access_group_id: group, inbound_id: inbound }).execute();
  return { node, group };
}

const revision = async (node: string) =>
  (await s.deps.db.selectFrom('nodes').select('desired_revision').where('id', '=', node).executeTakeFirstOrThrow()).desired_revision;

const auditActions = async (id: string) =>
  (await s.deps.db.selectFrom('audit_log').select('action').where('entity_id', '=', id).orderBy('id').execute()).map((r) => r.action);

describe('POST /clients: the admin creates an active client and vouches for the email (spec 3.1)', () => {
  it('creates an active client with a verified, lower-cased email; the view never carries the hash', async () => {
    const email = `New-${uniq()}@Example.COM`;
    const res = await api.create({ email, password: 'client-password-1', note: 'vip' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email: email.toLowerCase(), status: 'active', has_password: true, note: 'vip' });
    expect(res.body.id).toMatch(/^cli_[0-9a-z]{26}$/);
    expect(res.body.email_verified_at).toBe(s.clock.now().toISOString());
    expect(Object.keys(res.body).sort()).toEqual(
      ['created_at', 'email', 'email_verified_at', 'has_password', 'id', 'note', 'status', 'updated_at'].sort(),
    );
    expect(res.text).not.toMatch(/argon2/);
    const row = await s.deps.db.selectFrom('clients').select('password_hash').where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect((await api.get(res.body.id)).body).toEqual(res.body);
  });

  it('a client without password has has_password false and note null', async () => {
    const c = await newClient();
    expect(c).toMatchObject({ has_password: false, note: null, status: 'active' });
  });

  it('an email already taken, in any case, is 409 with errors.email', async () => {
    const c = await newClient();
    const res = await api.create({ email: c.email.toUpperCase() });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('urn:svc:problem:conflict');
    expect(res.body.errors.email).toBeDefined();
  });

  it('validates each field: email, password policy, note length, unknown fields', async () => {
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
    for (let i = 0; i < 12; i++) await newClient();
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

  it('status=pending is the application queue; every status filters', async () => {
    const pending = await insertClient('pending');
    const rejected = await insertClient('rejected');
    const disabled = await insertClient('disabled', true);
    const active = await newClient();
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
    const c = await newClient();
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

describe('PATCH /clients/{id}: merge; status only bans and unbans', () => {
  it('updates note, email (verified anew: the admin vouches) and password; absent fields stay', async () => {
    const c = await newClient({ note: 'first', password: 'client-password-1' });
    s.clock.advance(1000);
    const email = `moved-${uniq()}@example.com`;
    const res = await api.patch(c.id, { email: email.toUpperCase() });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ email, note: 'first', has_password: true, status: 'active' });
    expect(res.body.email_verified_at).toBe(s.clock.now().toISOString());
    expect((await api.patch(c.id, { note: null })).body.note).toBeNull();
    expect((await api.patch(c.id, { password: null })).body.has_password).toBe(false);
    expect((await api.patch(c.id, { password: 'another-password-2' })).body.has_password).toBe(true);
  });

  it('a password change ends the client sessions', async () => {
    const c = await newClient();
    const sid = await insertSession(c.id);
    expect((await api.patch(c.id, { password: 'brand-new-password' })).status).toBe(200);
    const row = await s.deps.db
      .selectFrom('sessions')
      .select(['revoked_at', 'revoked_reason'])
      .where('id', '=', sid)
      .executeTakeFirstOrThrow();
    expect(row.revoked_at).not.toBeNull();
    expect(row.revoked_reason).toBe('password_changed');
  });

  it('an email taken by another client is 409 with errors.email', async () => {
    const a = await newClient();
    const b = await newClient();
    const res = await api.patch(b.id, { email: a.email });
    expect(res.status).toBe(409);
    expect(res.body.errors.email).toBeDefined();
    expect((await api.patch(b.id, { email: b.email })).status).toBe(200);
  });

  it('ban (active -> disabled) and unban (disabled -> active); a ban ends the client sessions', async () => {
    const c = await newClient();
    const sid = await insertSession(c.id);
    const ban = await api.patch(c.id, { status: 'disabled' });
    expect(ban.status).toBe(200);
    expect(ban.body.status).toBe('disabled');
    const session = await s.deps.db.selectFrom('sessions').select('revoked_at').where('id', '=', sid).executeTakeFirstOrThrow();
    expect(session.revoked_at).not.toBeNull();
    expect((await api.patch(c.id, { status: 'disabled' })).status).toBe(200); // same status: no transition
    expect((await api.patch(c.id, { status: 'active' })).body.status).toBe('active');
  });

  it('any other status move is 409: pending and rejected clients are not banned or activated by PATCH', async () => {
    const pending = await insertClient('pending');
    const rejected = await insertClient('rejected');
    for (const [id, status] of [
      [pending, 'active'],
      [pending, 'disabled'],
      [rejected, 'active'],
      [rejected, 'disabled'],
    ] as const) {
      const res = await api.patch(id, { status });
      expect(res.status, `${id} -> ${status}`).toBe(409);
      expect(res.body.errors.status).toBeDefined();
    }
    expect((await api.get(pending)).body.status).toBe('pending');
    expect((await api.get(rejected)).body.status).toBe('rejected');
  });

  it('refuses statuses other than active|disabled, unknown fields and bad values with errors per field', async () => {
    const c = await newClient();
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

describe('approve and reject (spec 3.1): only from pending', () => {
  it('approve moves pending -> active and keeps email_verified_at as it was', async () => {
    const unverified = await insertClient('pending');
    const res = await api.approve(unverified);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'active', email_verified_at: null });
    const verified = await insertClient('pending', true);
    expect((await api.approve(verified)).body.email_verified_at).not.toBeNull();
  });

  it('reject moves pending -> rejected', async () => {
    const id = await insertClient('pending');
    const res = await api.reject(id);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('rejected');
  });

  it('approve or reject of a client that is not pending is 409, and changes nothing', async () => {
    const active = await newClient();
    const rejected = await insertClient('rejected');
    const disabled = await insertClient('disabled');
    for (const id of [active.id, rejected, disabled]) {
      const before = (await api.get(id)).body;
      for (const call of [api.approve, api.reject]) {
        const res = await call(id);
        expect(res.status).toBe(409);
        expect(res.body.type).toBe('urn:svc:problem:conflict');
      }
      expect((await api.get(id)).body).toEqual(before);
    }
    expect((await api.approve('cli_doesnotexist')).status).toBe(404);
    expect((await api.reject('cli_doesnotexist')).status).toBe(404);
  });
});

describe('DELETE /clients/{id}', () => {
  it('deletes a client without subscriptions, and its sessions', async () => {
    const c = await newClient();
    await insertSession(c.id);
    expect((await api.del(c.id)).status).toBe(204);
    expect((await api.get(c.id)).status).toBe(404);
    expect(await s.deps.db.selectFrom('sessions').select('id').where('subject_id', '=', c.id).execute()).toEqual([]);
    expect((await api.del(c.id)).status).toBe(404);
  });

  it('is 409 while the client has subscriptions, naming them in blocked_by', async () => {
    const c = await newClient();
    const sub = await s.api.post('/api/v1/subscriptions', { client_id: c.id, access_group_ids: [] }, { token });
    expect(sub.status).toBe(201);
    const res = await api.del(c.id);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/subscriptions/);
    expect(res.body.blocked_by).toEqual({ subscriptions: [sub.body.id] });
    expect((await api.get(c.id)).status).toBe(200);
    expect((await s.api.delete(`/api/v1/subscriptions/${sub.body.id}`, { token })).status).toBe(204);
    expect((await api.del(c.id)).status).toBe(204);
  });
});

describe('roles: a viewer reads clients but changes nothing', () => {
  it('viewer gets 200 on reads and 403 on every write', async () => {
    const viewer = (await adminWithRole(s, token, 'viewer')).access_token;
    const c = await newClient();
    const pending = await insertClient('pending');
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
});

describe('audit: every client mutation writes an entry in the same transaction', () => {
  it('records created, updated, approved, rejected and deleted with the acting admin', async () => {
    const c = await newClient();
    await api.patch(c.id, { status: 'disabled' });
    await api.del(c.id);
    expect(await auditActions(c.id)).toEqual(['client.created', 'client.updated', 'client.deleted']);
    const updated = await s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('entity_id', '=', c.id)
      .where('action', '=', 'client.updated')
      .executeTakeFirstOrThrow();
    expect(updated).toMatchObject({ actor_type: 'admin', entity_type: 'client' });
    expect(updated.actor_id).toMatch(/^adm_/);
    expect(updated.details).toMatchObject({ changed: ['status'], status: { from: 'active', to: 'disabled' }, event: 'ban' });

    const a = await insertClient('pending');
    const r = await insertClient('pending');
    await api.approve(a);
    await api.reject(r);
    expect(await auditActions(a)).toEqual(['client.approved']);
    expect(await auditActions(r)).toEqual(['client.rejected']);
  });

  it('no password or hash enters the audit details', async () => {
    const c = await newClient({ password: 'secret-password-9' });
    await api.patch(c.id, { password: 'secret-password-8' });
    const rows = await s.deps.db.selectFrom('audit_log').select('details').where('entity_id', '=', c.id).execute();
    expect(JSON.stringify(rows)).not.toMatch(/secret-password|argon2/);
  });

  it('a refused change (409) leaves no audit entry', async () => {
    const c = await newClient();
    expect((await api.approve(c.id)).status).toBe(409);
    expect(await auditActions(c.id)).toEqual(['client.created']);
  });
});

describe('revisions: a client status change moves exactly the nodes of its subscriptions', () => {
  it('ban and unban bump the nodes of every subscription of the client; a note or email change bumps none', async () => {
    const a = await fleetNode();
    const b = await fleetNode();
    const other = await fleetNode();
    const c = await newClient();
    for (const groups of [[a.group], [b.group]]) {
      expect((await s.api.post('/api/v1/subscriptions', { client_id: c.id, access_group_ids: groups }, { token })).status).toBe(201);
    }
    const before = { a: await revision(a.node), b: await revision(b.node), other: await revision(other.node) };

    expect((await api.patch(c.id, { note: 'quiet', email: `q-${uniq()}@example.com` })).status).toBe(200);
    expect([await revision(a.node), await revision(b.node)]).toEqual([before.a, before.b]);

    expect((await api.patch(c.id, { status: 'disabled' })).status).toBe(200);
    expect(await revision(a.node)).toBe(before.a + 1);
    expect(await revision(b.node)).toBe(before.b + 1);
    expect(await revision(other.node)).toBe(before.other);

    expect((await api.patch(c.id, { status: 'active' })).status).toBe(200);
    expect(await revision(a.node)).toBe(before.a + 2);
    expect(await revision(b.node)).toBe(before.b + 2);
    expect(await revision(other.node)).toBe(before.other);
  });

  it('approving a pending client that already has a subscription bumps its nodes', async () => {
    const a = await fleetNode();
    const pending = await insertClient('pending');
    expect((await s.api.post('/api/v1/subscriptions', { client_id: pending, access_group_ids: [a.group] }, { token })).status).toBe(201);
    const before = await revision(a.node);
    expect((await api.approve(pending)).status).toBe(200);
    expect(await revision(a.node)).toBe(before + 1);
  });
});
