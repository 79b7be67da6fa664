import { OWNER, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// Issue 12.8: answers that carry a credential are never kept by a cache, and the sign-in
// request schemas refuse unknown fields like every other schema.
let s: TestServer;
let ownerToken: string;
let setupAnswer: { status: number; headers: Headers };
beforeAll(async () => {
  s = await startAdminApi();
  // Unknown fields are refused before setup runs: bootstrap mode survives the attempt.
  const setupBody = { token: s.setupToken, ...OWNER };
  const refused = await s.api.post('/api/v1/setup', { ...setupBody, role: 'owner' });
  expect(refused.status).toBe(400);
  expect(refused.body.errors['(body)']).toContain('role');
  setupAnswer = await s.api.post('/api/v1/setup', setupBody);
  const login = await s.api.post('/api/v1/auth/login', OWNER);
  ownerToken = login.body.access_token;
});
afterAll(() => s.stop());

const noStore = (res: { headers: Headers }) => ({
  cacheControl: res.headers.get('cache-control'),
  pragma: res.headers.get('pragma'),
});
const NO_STORE = { cacheControl: 'no-store', pragma: 'no-cache' };

describe('every answer that carries a token is Cache-Control: no-store (issue 12.8)', () => {
  it('every operation of the OpenAPI document answers no-store, refusals included, so a new token route is covered', async () => {
    const { paths } = (await s.api.get('/api/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const seen: string[] = [];
    for (const [path, item] of Object.entries(paths)) {
      for (const method of Object.keys(item)) {
        // No token and no body: every protected route refuses (401), every open one answers
        // 400/404/401 without changing anything.
        const res = await s.api.call(method.toUpperCase(), path.replace(/\{[^}]+\}/g, 'x'));
        expect(noStore(res), `${method.toUpperCase()} ${path} -> ${res.status}`).toEqual(NO_STORE);
        seen.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(seen).toEqual(expect.arrayContaining(['POST /api/v1/setup', 'POST /api/v1/auth/login', 'POST /api/v1/auth/refresh']));
  });

  it('the token answers themselves: setup, login, refresh, an enrollment token', async () => {
    expect(setupAnswer.status).toBe(201);
    expect(noStore(setupAnswer)).toEqual(NO_STORE);
    const login = await s.api.post('/api/v1/auth/login', OWNER);
    expect(login.status).toBe(200);
    expect(noStore(login)).toEqual(NO_STORE);
    const refreshed = await s.api.post('/api/v1/auth/refresh', { refresh_token: login.body.refresh_token });
    expect(refreshed.status).toBe(200);
    expect(noStore(refreshed)).toEqual(NO_STORE);
    const node = await s.api.post('/api/v1/nodes', { name: 'n1', address: '203.0.113.10' }, { token: ownerToken });
    expect(node.status).toBe(201);
    const enroll = await s.api.post(`/api/v1/nodes/${node.body.id}/enroll-token`, undefined, { token: ownerToken });
    expect(enroll.status).toBe(201);
    expect(noStore(enroll)).toEqual(NO_STORE);
  });
});

describe('sign-in request schemas refuse unknown fields (issue 12.8)', () => {
  it.each([
    ['POST /auth/login', '/api/v1/auth/login', () => ({ ...OWNER, remember_me: true }), 'remember_me'],
    ['POST /auth/refresh', '/api/v1/auth/refresh', () => ({ refresh_token: 'x'.repeat(43), scope: 'admin' }), 'scope'],
    [
      'POST /admins',
      '/api/v1/admins',
      () => ({ email: 'new@example.com', password: 'long-enough-1', role: 'admin', is_owner: true }),
      'is_owner',
    ],
  ])('%s: an unknown field is a 400 problem naming it, and nothing happens', async (_name, path, body, field) => {
    const res = await s.api.post(path, body(), { token: ownerToken });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body.errors['(body)']).toContain(field);
    const admins = await s.deps.db.selectFrom('admins').select('email').execute();
    expect(admins.map((a) => a.email)).toEqual([OWNER.email]);
  });

  it('POST /setup: an unknown field was refused with bootstrap mode intact (see beforeAll), then setup succeeded', () => {
    expect(setupAnswer.status).toBe(201);
  });
});
