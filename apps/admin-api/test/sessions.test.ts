import { login, OWNER, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// The session rules (token claims and lifetimes, rotation, reuse revokes every session,
// logout, hashing, failures audited) are proven on the use cases:
// packages/domain-tests/test/auth/sessions.test.ts.
let s: TestServer;
const relaxed = { rate_limits: { login: { per_subject: { limit: 1000, window_seconds: 60 } } } };
beforeAll(async () => {
  s = await startAdminApi({ config: relaxed });
  await setupOwner(s);
});
afterAll(() => s.stop());

const refresh = (token: string) => s.api.post('/api/v1/auth/refresh', { refresh_token: token });
const me = (token: string) => s.api.get('/api/v1/auth/me', { token });

describe('admin sign-in and sessions over HTTP (spec 5.2-5.4, 3.2)', () => {
  it('POST /auth/login returns {access_token, refresh_token, token_type, expires_in, refresh_expires_in}', async () => {
    const res = await s.api.post('/api/v1/auth/login', OWNER);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 900,
      refresh_expires_in: expect.any(Number),
    });
  });

  it('a wrong password is 401 problem+json; a bad body is 400 naming the field', async () => {
    const wrong = await s.api.post('/api/v1/auth/login', { email: OWNER.email, password: 'wrong-password' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.type).toBe('urn:svc:problem:unauthenticated');
    const bad = await s.api.post('/api/v1/auth/login', { email: 'not-an-email', password: '' });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['email', 'password']);
  });

  it('POST /auth/refresh is 200 with the next pair; a used or unknown token is 401 problem+json', async () => {
    const pair = await login(s, OWNER.email, OWNER.password);
    const next = await refresh(pair.refresh_token);
    expect(next.status).toBe(200);
    expect(next.body.refresh_token).not.toBe(pair.refresh_token);
    expect((await me(next.body.access_token)).status).toBe(200);
    const unknown = await refresh('A'.repeat(43));
    expect(unknown.status).toBe(401);
    expect(unknown.body.type).toBe('urn:svc:problem:unauthenticated');
    expect((await s.api.post('/api/v1/auth/refresh', {})).body.errors).toHaveProperty('refresh_token');
  });

  it('POST /auth/logout is 204 and ends the session of the access token', async () => {
    const a = await login(s, OWNER.email, OWNER.password);
    const out = await s.api.post('/api/v1/auth/logout', undefined, { token: a.access_token });
    expect(out.status).toBe(204);
    expect((await refresh(a.refresh_token)).status).toBe(401);
  });

  it('GET /auth/me returns the signed-in admin, without the password hash', async () => {
    const pair = await login(s, OWNER.email, OWNER.password);
    const res = await me(pair.access_token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ email: OWNER.email, role: 'owner' });
    expect(res.body.password_hash).toBeUndefined();
  });
});

describe('auth.password_login off (SVC_AUTH_PASSWORD_LOGIN=false)', () => {
  it('makes the login route 404 and /auth/methods say so', async () => {
    const off = await startAdminApi({
      env: { SVC_AUTH_PASSWORD_LOGIN: 'false', SVC_AUTH_OAUTH_GOOGLE_CLIENT_ID: 'id', SVC_AUTH_OAUTH_GOOGLE_CLIENT_SECRET: 'secret' },
    });
    try {
      const res = await off.api.post('/api/v1/auth/login', OWNER);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect((await off.api.post('/api/v1/auth/login', { nonsense: 1 })).status).toBe(404);
      expect((await off.api.get('/api/v1/auth/methods')).body).toMatchObject({ password: false, oauth: ['google'] });
    } finally {
      await off.stop();
    }
  });
});
