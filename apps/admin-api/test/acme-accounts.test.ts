import { newId } from '@svc/domain';
import { adminWithRole, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
let ownerId: string;
let viewerToken: string;
beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  ownerId = o.admin.id;
  viewerToken = (await adminWithRole(s, token, 'viewer')).access_token;
});
afterAll(() => s.stop());

const LE = 'https://acme-v02.api.letsencrypt.org/directory';
const STAGING = 'https://acme-staging-v02.api.letsencrypt.org/directory';
const create = (body: Record<string, unknown>, t = token) => s.api.post('/api/v1/acme-accounts', body, { token: t });

async function certificate(acmeAccountId: string): Promise<string> {
  const t = s.clock.now();
  const id = newId('crt', t.getTime());
  await s.deps.db
    .insertInto('certificates')
    .values({
      id,
      name: null,
      kind: 'acme',
      domains: JSON.stringify(['example.com']),
      cert_pem: null,
      key_pem_enc: null,
      issuer: null,
      not_before: null,
      not_after: null,
      acme_account_id: acmeAccountId,
      dns_provider_id: null,
      last_error: null,
      created_at: t,
      updated_at: t,
    })
    .execute();
  return id;
}

describe('ACME accounts: create and read', () => {
  it("creates an account at Let's Encrypt production by default, not yet registered", async () => {
    const res = await create({ email: 'Certs@Example.com' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^acm_[0-9a-z]{26}$/),
      email: 'certs@example.com',
      directory_url: LE,
      registered: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect((await s.api.get(`/api/v1/acme-accounts/${res.body.id}`, { token })).body).toEqual(res.body);
    expect((await s.api.get('/api/v1/acme-accounts/acm_nothere', { token })).status).toBe(404);
  });

  it('takes another https directory', async () => {
    const res = await create({ email: 'certs@example.com', directory_url: STAGING });
    expect(res.status).toBe(201);
    expect(res.body.directory_url).toBe(STAGING);
  });

  it('shows registered: true once the account has an account URL (set by the ACME issue), never the key', async () => {
    const { id } = (await create({ email: 'reg@example.com' })).body;
    await s.deps.db
      .updateTable('acme_accounts')
      .set({ account_url: 'https://acme.example/acct/1', account_key_enc: s.deps.secrets.seal('PRIVATE-KEY-PEM') })
      .where('id', '=', id)
      .execute();
    const res = await s.api.get(`/api/v1/acme-accounts/${id}`, { token });
    expect(res.body.registered).toBe(true);
    expect(res.text).not.toContain('acct/1');
    expect(res.body).not.toHaveProperty('account_key_enc');
  });
});

describe('ACME accounts: validation and uniqueness', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a missing email', {}, 'email'],
    ['a malformed email', { email: 'not-an-email' }, 'email'],
    ['an http directory', { email: 'a@example.com', directory_url: 'http://acme.example/directory' }, 'directory_url'],
    ['a directory that is not a URL', { email: 'a@example.com', directory_url: 'letsencrypt' }, 'directory_url'],
    ['a directory with credentials', { email: 'a@example.com', directory_url: 'https://u:p@acme.example/dir' }, 'directory_url'],
    ['an unknown field', { email: 'a@example.com', eab_kid: 'x' }, '(body)'],
  ];
  for (const [rule, body, field] of cases) {
    it(`refuses ${rule}`, async () => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.errors)).toContain(field);
    });
  }

  it('refuses (409) a second account for the same email and directory, case-insensitively; other directories are fine', async () => {
    expect((await create({ email: 'dup@example.com' })).status).toBe(201);
    const again = await create({ email: 'DUP@example.com', directory_url: LE });
    expect(again.status).toBe(409);
    expect(again.body.type).toBe('urn:svc:problem:conflict');
    expect(again.body.errors.email).toBeDefined();
    expect((await create({ email: 'dup@example.com', directory_url: STAGING })).status).toBe(201);
  });

  it('has no PATCH (spec 4.4)', async () => {
    const { id } = (await create({ email: 'nopatch@example.com' })).body;
    const res = await s.api.patch(`/api/v1/acme-accounts/${id}`, { email: 'x@example.com' }, { token });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('DELETE');
  });
});

describe('ACME accounts: list', () => {
  it('walks every account exactly once in pages and filters by email', async () => {
    for (let i = 0; i < 13; i++) expect((await create({ email: `walk${i}@example.com` })).status).toBe(201);
    const all = (await s.api.get('/api/v1/acme-accounts?limit=200', { token })).body.items.map((a: { id: string }) => a.id);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { items: Array<{ id: string }>; next_cursor: string | null } } = await s.api.get(
        `/api/v1/acme-accounts?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token },
      );
      ids.push(...res.body.items.map((a) => a.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(ids).toEqual(all);
    expect(ids.length).toBeGreaterThanOrEqual(13);
    expect([...ids].sort()).toEqual(ids);

    const one = await s.api.get('/api/v1/acme-accounts?email=Walk3@example.com', { token });
    expect(one.body.items.map((a: { email: string }) => a.email)).toEqual(['walk3@example.com']);
  });
});

describe('ACME accounts: delete, roles, audit', () => {
  it('deletes an unused account; refuses (409) while a certificate is issued through it', async () => {
    const free = (await create({ email: 'free@example.com' })).body.id;
    expect((await s.api.delete(`/api/v1/acme-accounts/${free}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/acme-accounts/${free}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/acme-accounts/${free}`, { token })).status).toBe(404);

    const used = (await create({ email: 'used@example.com' })).body.id;
    const [c1, c2] = [await certificate(used), await certificate(used)];
    const res = await s.api.delete(`/api/v1/acme-accounts/${used}`, { token });
    expect(res.status).toBe(409);
    expect(res.body.blocked_by).toEqual({ certificates: [c1, c2].sort() });
    expect(res.body.detail).toMatch(/2 certificates/);
    expect((await s.api.get(`/api/v1/acme-accounts/${used}`, { token })).status).toBe(200);
  });

  it('a viewer reads accounts but gets 403 on create and delete', async () => {
    const { id } = (await create({ email: 'viewer-test@example.com' })).body;
    expect((await s.api.get('/api/v1/acme-accounts', { token: viewerToken })).status).toBe(200);
    expect((await s.api.get(`/api/v1/acme-accounts/${id}`, { token: viewerToken })).status).toBe(200);
    expect((await create({ email: 'v2@example.com' }, viewerToken)).status).toBe(403);
    expect((await s.api.delete(`/api/v1/acme-accounts/${id}`, { token: viewerToken })).status).toBe(403);
  });

  it('audits create and delete with the acting admin', async () => {
    const { id } = (await create({ email: 'audit@example.com' })).body;
    await s.api.delete(`/api/v1/acme-accounts/${id}`, { token });
    const rows = await s.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', id).orderBy('id').execute();
    expect(rows.map((r) => r.action)).toEqual(['acme_account.created', 'acme_account.deleted']);
    for (const r of rows) {
      expect(r).toMatchObject({ actor_type: 'admin', actor_id: ownerId, entity_type: 'acme_account' });
      expect(r.details).toMatchObject({ email: 'audit@example.com', directory_url: LE });
    }
  });
});
