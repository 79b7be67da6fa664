import { randomBytes } from 'node:crypto';
import { createSealer, encodeCursor } from '@svc/domain';
import { pageAll, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
let token: string;
beforeAll(async () => {
  s = await startAdminApi();
  token = (await setupOwner(s)).access_token;
});
afterAll(() => s.stop());

const createAdmin = (i: number | string) => s.api.post('/api/v1/admins', { email: `a${i}@example.com`, role: 'viewer' }, { token });

const walk = (path: string, limit: number, between?: (page: number) => Promise<void>) =>
  pageAll(s.api, path, { limit, token, ...(between ? { between } : {}) });

describe('cursor pagination (spec 4.2): {items, next_cursor}, limit and cursor, no offsets', () => {
  it('pages through admins without repeats or gaps while rows are inserted between pages', async () => {
    for (let i = 0; i < 11; i++) expect((await createAdmin(i)).status).toBe(201);
    const before = await walk('/api/v1/admins', 100);
    expect(before).toHaveLength(12);

    const during = await walk('/api/v1/admins', 3, async (n) => {
      expect((await createAdmin(`late${n}`)).status).toBe(201);
    });
    // Every row that existed before appears exactly once, in order; new rows (appended at the end) may appear too.
    expect(during.slice(0, before.length)).toEqual(before);
    expect(new Set(during).size).toBe(during.length);
  });

  it('pages through the audit log newest first; entries written between pages do not shift the pages', async () => {
    const first = await walk('/api/v1/audit-log', 100);
    const during = await walk('/api/v1/audit-log', 4, async (n) => {
      await createAdmin(`audit${n}`);
    });
    // New entries are newer than the cursor, so the walk sees exactly the entries that existed when it began.
    expect(during).toEqual(first.slice(0, during.length));
    expect(during.length).toBe(first.length);
    expect([...first].sort().reverse()).toEqual(first);
  });

  it('the last page has next_cursor null', async () => {
    const res = await s.api.get('/api/v1/admins?limit=200', { token });
    expect(res.body.next_cursor).toBeNull();
  });

  it('limit is bounded (1-200) and a foreign cursor is refused with 400', async () => {
    expect((await s.api.get('/api/v1/admins?limit=201', { token })).status).toBe(400);
    expect((await s.api.get('/api/v1/admins?limit=0', { token })).status).toBe(400);
    const bad = await s.api.get('/api/v1/admins?cursor=bm90LWEtY3Vyc29y', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors['query.cursor']).toBeDefined();
  });

  it('a hand-made, edited or foreign cursor is 400 (cursors are tamper-evident)', async () => {
    const issued = (await s.api.get('/api/v1/admins?limit=1', { token })).body.next_cursor as string;
    expect(issued).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect((await s.api.get(`/api/v1/admins?limit=1&cursor=${issued}`, { token })).status).toBe(200);
    const [inner, tag] = issued.split('.') as [string, string];
    // The domain's own encoding of a cursor, made by hand: well formed, never issued.
    const handMade = encodeCursor('adm_0000000000000000000000000');
    const edited = `${inner}.${tag.slice(0, -1)}${tag.endsWith('A') ? 'B' : 'A'}`;
    const foreign = `${inner}.${createSealer(randomBytes(32)).mac('page-cursor', inner)}`;
    for (const cursor of [handMade, `${handMade}.${tag}`, edited, foreign, inner, `.${tag}`, `${issued}.${tag}`]) {
      const res = await s.api.get(`/api/v1/admins?limit=1&cursor=${encodeURIComponent(cursor)}`, { token });
      expect(res.status, cursor).toBe(400);
      expect(res.body.errors).toEqual({ 'query.cursor': 'not a cursor this API issued' });
    }
  });
});

describe('searchable lists (issue 30 item 6): q, sort and the first page total over HTTP', () => {
  it('q and sort page the clients in that sort, with the total on the first page only', async () => {
    for (const name of ['mia', 'ann', 'zoe', 'bea']) {
      const res = await s.api.post('/api/v1/clients', { email: `${name}.search@example.com` }, { token });
      expect(res.status).toBe(201);
    }
    const first = await s.api.get('/api/v1/clients?q=.search%40&sort=-email&limit=3', { token });
    expect(first.status).toBe(200);
    expect(first.body.items.map((c: { email: string }) => c.email)).toEqual([
      'zoe.search@example.com',
      'mia.search@example.com',
      'bea.search@example.com',
    ]);
    expect({ total: first.body.total, exact: first.body.total_exact }).toEqual({ total: 4, exact: true });
    const cursor = encodeURIComponent(first.body.next_cursor);
    const second = await s.api.get(`/api/v1/clients?q=.search%40&sort=-email&limit=3&cursor=${cursor}`, { token });
    expect(second.body.items.map((c: { email: string }) => c.email)).toEqual(['ann.search@example.com']);
    expect(second.body.total).toBeNull();
    // The cursor belongs to its sort: asked with another, it is a 400 that names the sort.
    const other = await s.api.get(`/api/v1/clients?q=.search%40&sort=email&limit=3&cursor=${cursor}`, { token });
    expect(other.status).toBe(400);
    expect(other.body.errors.cursor).toMatch(/sort=-email/);
  });

  it('a sort a list does not have, or an overlong q, is a 400 naming the field', async () => {
    const bad = await s.api.get('/api/v1/subscriptions?sort=token_hash', { token });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors)).toEqual(['query.sort']);
    const long = await s.api.get(`/api/v1/clients?q=${'a'.repeat(201)}`, { token });
    expect(long.status).toBe(400);
    expect(Object.keys(long.body.errors)).toEqual(['query.q']);
    for (const path of ['/api/v1/subscriptions', '/api/v1/nodes', '/api/v1/payments', '/api/v1/audit-log']) {
      const res = await s.api.get(`${path}?q=${encodeURIComponent('%_\\\'"')}&sort=created`, { token });
      expect(res.status, path).toBe(200);
      expect(res.body.total_exact, path).toBe(true);
    }
  });
});
