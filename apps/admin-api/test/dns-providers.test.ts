import { randomUUID } from 'node:crypto';
import { type DomainContext, withActor } from '@svc/domain';
import { adminWithRole, fixtures, freePort, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// The rules (credentials checked per kind, write-only, sealed, delete refused while used,
// audit) are proven on the use cases: packages/domain-tests/test/acme/dns-providers.test.ts.
let s: TestServer;
let token: string;
let viewerToken: string;
let asOwner: DomainContext;
beforeAll(async () => {
  // Cloudflare's API where nothing listens: a check reaches no provider from a test.
  s = await startAdminApi({ env: { SVC_ACME_CLOUDFLARE_API_URL: `http://127.0.0.1:${await freePort()}` } });
  const o = await setupOwner(s);
  token = o.access_token;
  asOwner = withActor(s.deps, { type: 'admin', id: o.admin.id, role: 'owner' });
  viewerToken = (await adminWithRole(s, token, 'viewer')).access_token;
});
afterAll(() => s.stop());

const CF_TOKEN = `cf-${randomUUID()}`;
const cloudflare = { kind: 'cloudflare', name: 'CF main', credentials: { api_token: CF_TOKEN } };
const create = (body: Record<string, unknown>, t = token) => s.api.post('/api/v1/dns-providers', body, { token: t });
const patch = (id: string, body: Record<string, unknown>, t = token) => s.api.patch(`/api/v1/dns-providers/${id}`, body, { token: t });
const provider = (input: Parameters<ReturnType<typeof fixtures>['dnsProvider']>[0] = {}) => fixtures(asOwner).dnsProvider(input);

describe('POST /dns-providers, GET /dns-providers/{id}', () => {
  it('creates (201) a provider whose body names the credentials set, never their values; GET reads it; an unknown id is 404', async () => {
    const res = await create(cloudflare);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^dns_[0-9a-z]{26}$/),
      kind: 'cloudflare',
      name: 'CF main',
      credentials_set: ['api_token'],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    expect(res.text).not.toContain(CF_TOKEN);
    expect((await s.api.get(`/api/v1/dns-providers/${res.body.id}`, { token })).body).toEqual(res.body);
    expect((await s.api.get('/api/v1/dns-providers/dns_nothere', { token })).status).toBe(404);
  });

  it('a body the input rules refuse is 400 problem+json naming each field', async () => {
    for (const [body, field] of [
      [{ ...cloudflare, credentials: {} }, 'credentials.api_token'],
      [{ ...cloudflare, credentials: { api_token: 5 } }, 'credentials.api_token'],
      [{ ...cloudflare, kind: 'godaddy' }, 'kind'],
      [{ ...cloudflare, enabled: true }, '(body)'],
    ] as const) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.body.type).toBe('urn:svc:problem:validation');
      expect(Object.keys(res.body.errors)).toContain(field);
    }
  });
});

describe('PATCH /dns-providers/{id}', () => {
  it('is 200 with the merged provider; a credential set the stored kind refuses is 400 naming it; an unknown provider is 404', async () => {
    const { id } = await provider();
    const renamed = await patch(id, { name: 'CF renamed' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id, name: 'CF renamed', kind: 'cloudflare', credentials_set: ['api_token'] });
    const foreign = await patch(id, { credentials: { api_token: 'x', region: 'eu-west-1' } });
    expect(foreign.status).toBe(400);
    expect(Object.keys(foreign.body.errors)).toEqual(['credentials.region']);
    expect((await patch(id, { kind: 'digitalocean' })).body.errors).toHaveProperty(['(body)']);
    expect((await patch('dns_nothere', { name: 'x' })).status).toBe(404);
  });
});

describe('GET /dns-providers', () => {
  it('walks every provider exactly once in pages', async () => {
    for (let i = 0; i < 11; i++) await provider({ name: `walk ${i}` });
    const all = (await s.api.get('/api/v1/dns-providers?limit=200', { token })).body.items.map((p: { id: string }) => p.id);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { items: Array<{ id: string }>; next_cursor: string | null } } = await s.api.get(
        `/api/v1/dns-providers?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token },
      );
      ids.push(...res.body.items.map((p) => p.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(ids).toEqual(all);
    expect(ids.length).toBeGreaterThanOrEqual(11);
  });

  it('filters by kind; an unknown kind is 400', async () => {
    await provider({ kind: 'digitalocean', credentials: { api_token: 'x' } });
    await provider({ kind: 'route53', credentials: { access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: 'x' } });
    for (const kind of ['cloudflare', 'route53', 'digitalocean']) {
      const res = await s.api.get(`/api/v1/dns-providers?kind=${kind}&limit=200`, { token });
      expect(res.body.items.length).toBeGreaterThan(0);
      expect(res.body.items.every((p: { kind: string }) => p.kind === kind)).toBe(true);
    }
    expect((await s.api.get('/api/v1/dns-providers?kind=bind', { token })).status).toBe(400);
  });
});

describe('DELETE /dns-providers/{id}, roles', () => {
  it('deletes (204); the provider is then 404', async () => {
    const { id } = await provider();
    expect((await s.api.delete(`/api/v1/dns-providers/${id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/dns-providers/${id}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/dns-providers/${id}`, { token })).status).toBe(404);
  });

  it('check of a provider whose API cannot be reached is a report with ok false at the add step saying "not reachable", never the connection-level detail (rfc2136 end to end: dns-provider-check.test.ts)', async () => {
    const { id } = await provider();
    const res = await s.api.post(`/api/v1/dns-providers/${id}/check`, { domain: 'example.com' }, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ok: false,
      steps: [{ step: 'add', ok: false, detail: expect.stringMatching(/^Cloudflare \(.*\): not reachable$/) }],
    });
  });

  it('a viewer reads providers but gets 403 on every write', async () => {
    const { id } = await provider();
    expect((await s.api.get('/api/v1/dns-providers', { token: viewerToken })).status).toBe(200);
    expect((await s.api.get(`/api/v1/dns-providers/${id}`, { token: viewerToken })).status).toBe(200);
    expect((await create(cloudflare, viewerToken)).status).toBe(403);
    expect((await patch(id, { name: 'x' }, viewerToken)).status).toBe(403);
    expect((await s.api.delete(`/api/v1/dns-providers/${id}`, { token: viewerToken })).status).toBe(403);
  });
});
