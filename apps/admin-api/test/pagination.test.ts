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
