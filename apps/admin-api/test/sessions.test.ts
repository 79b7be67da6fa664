import { createHash } from 'node:crypto';
import { login, OWNER, setupOwner, type TestServer } from '@svc/testkit';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer;
// Many sign-ins of one admin here: rate limits are proven in rate-limit.test.ts.
const relaxed = { rate_limits: { login: { per_subject: { limit: 1000, window_seconds: 60 } } } };
beforeAll(async () => {
  s = await startAdminApi({ config: relaxed });
  await setupOwner(s);
});
afterAll(() => s.stop());

const refresh = (token: string) => s.api.post('/api/v1/auth/refresh', { refresh_token: token });
const me = (token: string) => s.api.get('/api/v1/auth/me', { token });

describe('admin sign-in and sessions (spec 5.2-5.4, 3.2)', () => {
  it('password login returns {access_token, refresh_token, token_type, expires_in}', async () => {
    const res = await s.api.post('/api/v1/auth/login', OWNER);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(typeof res.body.access_token).toBe('string');
    expect(Buffer.from(res.body.refresh_token, 'base64url')).toHaveLength(32);
  });

  it('the access token is a JWT with sub, scope admin and role, valid 15 minutes', async () => {
    const pair = await login(s, OWNER.email, OWNER.password);
    const claims = decodeJwt(pair.access_token);
    const owner = await s.deps.db.selectFrom('admins').select('id').where('email', '=', OWNER.email).executeTakeFirstOrThrow();
    expect(claims).toMatchObject({ sub: owner.id, scope: 'admin', role: 'owner' });
    expect((claims.exp as number) - (claims.iat as number)).toBe(15 * 60);
    expect(decodeProtectedHeader(pair.access_token).alg).toBe('EdDSA');
  });

  it('an access token stops working after 15 minutes; it only expires', async () => {
    const pair = await login(s, OWNER.email, OWNER.password);
    expect((await me(pair.access_token)).status).toBe(200);
    s.clock.advance(15 * 60 * 1000 + 1000);
    const late = await me(pair.access_token);
    expect(late.status).toBe(401);
    expect(late.body.detail).toMatch(/expired/);
  });

  it('only the SHA-256 of a refresh token is stored', async () => {
    const pair = await login(s, OWNER.email, OWNER.password);
    const hash = createHash('sha256').update(pair.refresh_token).digest('hex');
    expect(
      await s.deps.db.selectFrom('refresh_tokens').select('token_hash').where('token_hash', '=', hash).executeTakeFirst(),
    ).toBeTruthy();
    expect(
      await s.deps.db.selectFrom('refresh_tokens').select('token_hash').where('token_hash', '=', pair.refresh_token).executeTakeFirst(),
    ).toBeUndefined();
  });

  it('refresh rotates the pair; the new refresh token works, the access token is new', async () => {
    const pair = await login(s, OWNER.email, OWNER.password);
    s.clock.advance(1000);
    const next = await refresh(pair.refresh_token);
    expect(next.status).toBe(200);
    expect(next.body.refresh_token).not.toBe(pair.refresh_token);
    expect(next.body.access_token).not.toBe(pair.access_token);
    expect(decodeJwt(next.body.access_token).sid).toBe(decodeJwt(pair.access_token).sid);
    expect((await me(next.body.access_token)).status).toBe(200);
    expect((await refresh(next.body.refresh_token)).status).toBe(200);
  });

  it('a used refresh token presented again is refused and revokes every session of that admin', async () => {
    const a = await login(s, OWNER.email, OWNER.password);
    const b = await login(s, OWNER.email, OWNER.password);
    const rotated = await refresh(a.refresh_token);
    expect(rotated.status).toBe(200);

    const replay = await refresh(a.refresh_token);
    expect(replay.status).toBe(401);
    expect(replay.body.detail).toMatch(/already used/);

    // Every session of the subject is gone: the rotated one and the unrelated one.
    expect((await refresh(rotated.body.refresh_token)).status).toBe(401);
    expect((await refresh(b.refresh_token)).status).toBe(401);
    const audit = await s.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'auth.refresh_reuse_detected').execute();
    expect(audit.length).toBeGreaterThanOrEqual(1);
    // Signing in again still works.
    const fresh = await login(s, OWNER.email, OWNER.password);
    expect((await refresh(fresh.refresh_token)).status).toBe(200);
  });

  it('concurrent use of one refresh token issues at most one new pair', async () => {
    const a = await login(s, OWNER.email, OWNER.password);
    const results = await Promise.all([refresh(a.refresh_token), refresh(a.refresh_token), refresh(a.refresh_token)]);
    expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1);
  });

  it('logout revokes only the current session', async () => {
    const a = await login(s, OWNER.email, OWNER.password);
    const b = await login(s, OWNER.email, OWNER.password);
    const out = await s.api.post('/api/v1/auth/logout', undefined, { token: a.access_token });
    expect(out.status).toBe(204);
    expect((await refresh(a.refresh_token)).status).toBe(401);
    expect((await refresh(b.refresh_token)).status).toBe(200);
  });

  it('a refresh token expires after 30 days', async () => {
    const a = await login(s, OWNER.email, OWNER.password);
    s.clock.advance(30 * 24 * 3600 * 1000 + 1000);
    expect((await refresh(a.refresh_token)).status).toBe(401);
  });

  it('an unknown refresh token is refused and the failure audited', async () => {
    const res = await refresh('A'.repeat(43));
    expect(res.status).toBe(401);
    const audit = await s.deps.db.selectFrom('audit_log').select('action').where('action', '=', 'auth.refresh_failed').execute();
    expect(audit.length).toBeGreaterThanOrEqual(1);
  });

  it('a wrong password and an unknown email get the same 401 and are both audited', async () => {
    const wrong = await s.api.post('/api/v1/auth/login', { email: OWNER.email, password: 'wrong-password' });
    const unknown = await s.api.post('/api/v1/auth/login', { email: 'nobody@example.com', password: 'wrong-password' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body.detail).toBe(unknown.body.detail);
    const rows = await s.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'auth.login_failed').execute();
    const reasons = rows.map((r) => (r.details as { reason: string }).reason);
    expect(reasons).toEqual(expect.arrayContaining(['wrong_password', 'unknown_email']));
    expect(JSON.stringify(rows)).not.toContain('wrong-password');
  });

  it('passwords are stored as Argon2id with at least m=19 MiB, t=2, p=1', async () => {
    const row = await s.deps.db.selectFrom('admins').select('password_hash').where('email', '=', OWNER.email).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('GET /auth/me returns the signed-in admin', async () => {
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
