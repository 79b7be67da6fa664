import { type DomainContext, LETS_ENCRYPT_PRODUCTION, withActor } from '@svc/domain';
import { adminWithRole, fixtures, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// The rules (defaults, one account per email and directory, delete refused while used,
// audit) are proven on the use cases: packages/domain-tests/test/acme/acme-accounts.test.ts.
let s: TestServer;
let token: string;
let viewerToken: string;
let asOwner: DomainContext;
beforeAll(async () => {
  s = await startAdminApi();
  const o = await setupOwner(s);
  token = o.access_token;
  asOwner = withActor(s.deps, { type: 'admin', id: o.admin.id, role: 'owner' });
  viewerToken = (await adminWithRole(s, token, 'viewer')).access_token;
});
afterAll(() => s.stop());

const create = (body: Record<string, unknown>, t = token) => s.api.post('/api/v1/acme-accounts', body, { token: t });
const account = (input: { email?: string } = {}) => fixtures(asOwner).acmeAccount(input);

describe('POST /acme-accounts, GET /acme-accounts/{id}', () => {
  it('creates (201) the account; GET reads it; an unknown id is 404', async () => {
    const res = await create({ email: 'Certs@Example.com' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^acm_[0-9a-z]{26}$/),
      email: 'certs@example.com',
      directory_url: LETS_ENCRYPT_PRODUCTION,
      registered: false,
      registered_at: null,
      registration_error: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect((await s.api.get(`/api/v1/acme-accounts/${res.body.id}`, { token })).body).toEqual(res.body);
    expect((await s.api.get('/api/v1/acme-accounts/acm_nothere', { token })).status).toBe(404);
  });

  it('a body the input rules refuse is 400 problem+json naming the field', async () => {
    for (const [body, field] of [
      [{ email: 'a@example.com', directory_url: 'http://acme.example/directory' }, 'directory_url'],
      [{ email: 'not-an-email' }, 'email'],
      [{ email: 'a@example.com', eab_kid: 'x' }, '(body)'],
    ] as const) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.type).toBe('urn:svc:problem:validation');
      expect(Object.keys(res.body.errors)).toContain(field);
    }
  });

  it('a second account for the same email and directory is 409 problem+json naming email', async () => {
    await account({ email: 'dup@example.com' });
    const again = await create({ email: 'DUP@example.com' });
    expect(again.status).toBe(409);
    expect(again.body.type).toBe('urn:svc:problem:conflict');
    expect(again.body.errors.email).toBeDefined();
  });

  it('has no PATCH (spec 4.4)', async () => {
    const { id } = await account();
    const res = await s.api.patch(`/api/v1/acme-accounts/${id}`, { email: 'x@example.com' }, { token });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('DELETE');
  });
});

describe('GET /acme-accounts', () => {
  it('walks every account exactly once in pages and filters by email', async () => {
    for (let i = 0; i < 13; i++) await account({ email: `walk${i}@example.com` });
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

describe('DELETE /acme-accounts/{id}, roles', () => {
  it('deletes (204); the account is then 404', async () => {
    const { id } = await account();
    expect((await s.api.delete(`/api/v1/acme-accounts/${id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/acme-accounts/${id}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/acme-accounts/${id}`, { token })).status).toBe(404);
  });

  it('a viewer reads accounts but gets 403 on create and delete', async () => {
    const { id } = await account();
    expect((await s.api.get('/api/v1/acme-accounts', { token: viewerToken })).status).toBe(200);
    expect((await s.api.get(`/api/v1/acme-accounts/${id}`, { token: viewerToken })).status).toBe(200);
    expect((await create({ email: 'v2@example.com' }, viewerToken)).status).toBe(403);
    expect((await s.api.delete(`/api/v1/acme-accounts/${id}`, { token: viewerToken })).status).toBe(403);
  });
});
