import { adminWithRole, oversizedPost, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// The endpoint registry of outbound webhooks (docs/notifications.md). Deliveries, signatures
// and retries are proven with the worker running: apps/worker/test/webhooks.test.ts.
let s: TestServer;
let token: string;
let viewerToken: string;
let adminToken: string;
beforeAll(async () => {
  s = await startAdminApi();
  token = (await setupOwner(s)).access_token;
  viewerToken = (await adminWithRole(s, token, 'viewer')).access_token;
  adminToken = (await adminWithRole(s, token, 'admin')).access_token;
});
afterAll(() => s.stop());

const create = (body: unknown, t = token) => s.api.post('/api/v1/webhooks', body, { token: t });
const hook = { url: 'https://hooks.example.com/svc?tenant=7', description: 'ops channel', event_types: ['client.registered'] };

describe('POST /webhooks, GET /webhooks/{id}', () => {
  it('creates (201) an endpoint; the answer carries a whsec_ secret, shown this once: never in GET, the list, PATCH or the audit log', async () => {
    const res = await create(hook);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^whk_[0-9a-z]{26}$/),
      url: hook.url,
      description: 'ops channel',
      event_types: ['client.registered'],
      enabled: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const { secret, ...view } = res.body;
    const got = await s.api.get(`/api/v1/webhooks/${view.id}`, { token });
    expect(got.body).toEqual(view);
    const list = await s.api.get('/api/v1/webhooks', { token });
    const patched = await s.api.patch(`/api/v1/webhooks/${view.id}`, { description: 'renamed' }, { token });
    const audit = await s.api.get(`/api/v1/audit-log?entity_id=${view.id}`, { token });
    for (const answer of [got, list, patched, audit]) {
      expect(answer.status).toBe(200);
      expect(answer.text).not.toContain(secret);
      expect(answer.text).not.toContain('whsec_');
    }
    // The sealed secret at rest is not the secret either.
    const row = await s.deps.db.selectFrom('webhook_endpoints').select('secret_enc').where('id', '=', view.id).executeTakeFirstOrThrow();
    expect(row.secret_enc).not.toContain(secret.slice(6));
    expect(s.deps.secrets.open(row.secret_enc)).toBe(secret);
  });

  it('event_types omitted or null means every type; unknown ids are 404', async () => {
    const res = await create({ url: 'http://127.0.0.1:9/in' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ event_types: null, description: '', enabled: true });
    expect((await s.api.get('/api/v1/webhooks/whk_nothere', { token })).status).toBe(404);
    expect((await s.api.get('/api/v1/webhooks/whk_nothere/deliveries', { token })).status).toBe(404);
    expect((await s.api.post('/api/v1/webhooks/whk_nothere/test', undefined, { token })).status).toBe(404);
  });

  it('hostile input is a 400 problem naming the field: bad URLs, credentials in the URL, unknown event types, huge values, extra fields', async () => {
    for (const [body, field] of [
      [{ url: 'ftp://hooks.example.com/x' }, 'url'],
      [{ url: 'javascript:alert(1)' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'https://user:pass@hooks.example.com/x' }, 'url'],
      [{ url: 'https://hooks.example.com/x#frag' }, 'url'],
      [{ url: `https://hooks.example.com/${'a'.repeat(3000)}` }, 'url'],
      [{ url: 5 }, 'url'],
      [{}, 'url'],
      [{ ...hook, event_types: ['client.deleted'] }, 'event_types.0'],
      [{ ...hook, event_types: [] }, 'event_types'],
      [{ ...hook, description: 'd'.repeat(501) }, 'description'],
      [{ ...hook, description: 'bell\u0007' }, 'description'],
      [{ ...hook, secret: 'mine' }, '(body)'],
      [{ ...hook, enabled: 'yes' }, 'enabled'],
    ] as const) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(Object.keys(res.body.errors ?? {}), JSON.stringify(res.body)).toContain(field);
    }
  });

  it('a body over the size limit is refused with a problem, not a 5xx', async () => {
    const res = await oversizedPost(
      `${s.url}/api/v1/webhooks`,
      JSON.stringify({ url: 'https://hooks.example.com/x', description: 'x'.repeat(2 * 1024 * 1024) }),
      { authorization: `Bearer ${token}` },
    );
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });
});

describe('PATCH, DELETE, rotate-secret; roles (spec 5.4)', () => {
  it('PATCH merges (url, event_types back to null = all, enabled); DELETE removes it (then 404); each change is audited', async () => {
    const { id } = (await create(hook)).body;
    const res = await s.api.patch(
      `/api/v1/webhooks/${id}`,
      { url: 'https://other.example.com/in', event_types: null, enabled: false },
      { token },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ url: 'https://other.example.com/in', event_types: null, enabled: false, description: 'ops channel' });
    expect((await s.api.patch(`/api/v1/webhooks/${id}`, { url: 'gopher://x' }, { token })).status).toBe(400);
    expect((await s.api.delete(`/api/v1/webhooks/${id}`, { token })).status).toBe(204);
    expect((await s.api.get(`/api/v1/webhooks/${id}`, { token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/webhooks/${id}`, { token })).status).toBe(404);
    const audit = await s.api.get(`/api/v1/audit-log?entity_id=${id}`, { token });
    expect(audit.body.items.map((e: { action: string }) => e.action).sort()).toEqual([
      'webhook.created',
      'webhook.deleted',
      'webhook.updated',
    ]);
    const created = audit.body.items.find((e: { action: string }) => e.action === 'webhook.created');
    // The query (receivers put tokens there) is not kept in the audit log.
    expect(created.details.url).toBe('https://hooks.example.com/svc?…');
  });

  it('rotate-secret answers a new secret once (200); the old one is gone', async () => {
    const { id, secret } = (await create(hook)).body;
    const res = await s.api.post(`/api/v1/webhooks/${id}/rotate-secret`, undefined, { token: adminToken });
    expect(res.status).toBe(200);
    expect(res.body.secret).toMatch(/^whsec_/);
    expect(res.body.secret).not.toBe(secret);
    const row = await s.deps.db.selectFrom('webhook_endpoints').select('secret_enc').where('id', '=', id).executeTakeFirstOrThrow();
    expect(s.deps.secrets.open(row.secret_enc)).toBe(res.body.secret);
  });

  it('a viewer reads endpoints and deliveries but cannot create, change, test, rotate or delete (403); an admin writes', async () => {
    const { id } = (await create(hook)).body;
    expect((await s.api.get('/api/v1/webhooks', { token: viewerToken })).status).toBe(200);
    expect((await s.api.get(`/api/v1/webhooks/${id}`, { token: viewerToken })).status).toBe(200);
    expect((await s.api.get(`/api/v1/webhooks/${id}/deliveries`, { token: viewerToken })).status).toBe(200);
    expect((await create(hook, viewerToken)).status).toBe(403);
    expect((await s.api.patch(`/api/v1/webhooks/${id}`, { enabled: false }, { token: viewerToken })).status).toBe(403);
    expect((await s.api.post(`/api/v1/webhooks/${id}/test`, undefined, { token: viewerToken })).status).toBe(403);
    expect((await s.api.post(`/api/v1/webhooks/${id}/rotate-secret`, undefined, { token: viewerToken })).status).toBe(403);
    expect((await s.api.delete(`/api/v1/webhooks/${id}`, { token: viewerToken })).status).toBe(403);
    expect((await create(hook, adminToken)).status).toBe(201);
    expect((await s.api.get('/api/v1/webhooks')).status).toBe(401);
  });

  it("a viewer's read and list carry the URL as the audit log keeps it (no query token); an owner's and an admin's carry it whole", async () => {
    const url = 'https://hooks.example.com/in/svc?token=rcv-s3cr3t&tenant=7';
    const { id } = (await create({ url })).body;
    const viewerRead = await s.api.get(`/api/v1/webhooks/${id}`, { token: viewerToken });
    expect(viewerRead.status).toBe(200);
    expect(viewerRead.body.url).toBe('https://hooks.example.com/in/svc?…');
    const viewerList = await s.api.get('/api/v1/webhooks?limit=200', { token: viewerToken });
    expect(viewerList.body.items.find((w: { id: string }) => w.id === id).url).toBe('https://hooks.example.com/in/svc?…');
    expect(viewerRead.text + viewerList.text).not.toContain('rcv-s3cr3t');
    for (const t of [token, adminToken]) {
      const read = await s.api.get(`/api/v1/webhooks/${id}`, { token: t });
      expect(read.body).toEqual({ ...viewerRead.body, url });
      const list = await s.api.get('/api/v1/webhooks?limit=200', { token: t });
      expect(list.body.items.find((w: { id: string }) => w.id === id).url).toBe(url);
    }
  });

  it('the list pages with a cursor, oldest first', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create(hook)).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: Array<{ id: string }>; next_cursor: string | null } } = await s.api.get(
        `/api/v1/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { token },
      );
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((w) => w.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen.filter((id) => ids.includes(id))).toEqual(ids);
    expect(new Set(seen).size).toBe(seen.length);
  });
});
