import { OWNER, setupOwner, type TestServer } from '@svc/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

let s: TestServer | undefined;
afterEach(async () => {
  await s?.stop();
  s = undefined;
});

const limits = {
  http: { trust_proxy: true },
  rate_limits: {
    login: { per_ip: { limit: 3, window_seconds: 60 }, per_subject: { limit: 5, window_seconds: 600 } },
    refresh: { per_ip: { limit: 2, window_seconds: 30 }, per_subject: { limit: 100, window_seconds: 30 } },
  },
};
const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
const attempt = (ip: string, email = OWNER.email) => s!.api.post('/api/v1/auth/login', { email, password: 'wrong-password' }, from(ip));

describe('rate limits (spec 5.10): sign-in and refresh per IP and per subject, sliding window', () => {
  it('sign-in is limited per IP: the next attempt is 429 problem+json with Retry-After', async () => {
    s = await startAdminApi({ config: limits });
    for (let i = 0; i < 3; i++) expect((await attempt('10.0.0.1', `u${i}@example.com`)).status).toBe(401);
    const limited = await attempt('10.0.0.1', 'u9@example.com');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toBe('application/problem+json');
    expect(limited.body.type).toBe('urn:svc:problem:rate-limited');
    expect(Number(limited.headers.get('retry-after'))).toBe(60);
    // Another address is not affected.
    expect((await attempt('10.0.0.2')).status).toBe(401);
  });

  it('the window slides: capacity returns as each old attempt leaves the window, not all at once', async () => {
    s = await startAdminApi({ config: limits });
    await attempt('10.0.0.1', 'a@example.com'); // t=0
    s.clock.advance(20_000);
    await attempt('10.0.0.1', 'b@example.com'); // t=20
    s.clock.advance(20_000);
    await attempt('10.0.0.1', 'c@example.com'); // t=40
    s.clock.advance(10_000);
    const at50 = await attempt('10.0.0.1', 'd@example.com');
    expect(at50.status).toBe(429);
    expect(Number(at50.headers.get('retry-after'))).toBe(10);
    s.clock.advance(10_001); // t=60.001: only the t=0 attempt has left
    expect((await attempt('10.0.0.1', 'e@example.com')).status).toBe(401);
    expect((await attempt('10.0.0.1', 'f@example.com')).status).toBe(429);
  });

  it('sign-in is limited per subject across addresses', async () => {
    s = await startAdminApi({ config: limits });
    for (let i = 0; i < 5; i++) expect((await attempt(`10.1.0.${i}`)).status).toBe(401);
    const limited = await attempt('10.1.0.99');
    expect(limited.status).toBe(429);
    // Even the right password waits: the limit protects the account, not the guess.
    expect((await s.api.post('/api/v1/auth/login', OWNER, from('10.1.0.100'))).status).toBe(429);
    s.clock.advance(600_001);
    expect((await s.api.post('/api/v1/auth/login', OWNER, from('10.1.0.100'))).status).toBe(401);
  });

  it('refresh is limited per IP', async () => {
    s = await startAdminApi({ config: limits });
    const refresh = () => s!.api.post('/api/v1/auth/refresh', { refresh_token: 'x'.repeat(43) }, from('10.2.0.1'));
    expect((await refresh()).status).toBe(401);
    expect((await refresh()).status).toBe(401);
    const limited = await refresh();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('30');
  });

  it('refresh is limited per subject across addresses', async () => {
    s = await startAdminApi({
      config: {
        ...limits,
        rate_limits: {
          ...limits.rate_limits,
          refresh: { per_ip: { limit: 100, window_seconds: 30 }, per_subject: { limit: 2, window_seconds: 30 } },
        },
      },
    });
    const owner = await setupOwner(s);
    const first = await s.api.post('/api/v1/auth/refresh', { refresh_token: owner.refresh_token }, from('10.3.0.1'));
    expect(first.status).toBe(200);
    expect((await s.api.post('/api/v1/auth/refresh', { refresh_token: first.body.refresh_token }, from('10.3.0.2'))).status).toBe(200);
    expect((await s.api.post('/api/v1/auth/refresh', { refresh_token: 'whatever' }, from('10.3.0.3'))).status).toBe(401);
  });
});

describe('client address behind a trusted proxy', () => {
  it('is the rightmost X-Forwarded-For entry: entries the caller prepends do not change the rate-limit key', async () => {
    s = await startAdminApi({ config: limits });
    for (let i = 0; i < 3; i++) {
      const res = await s.api.post(
        '/api/v1/auth/login',
        { email: `x${i}@example.com`, password: 'nope-nope' },
        { headers: { 'x-forwarded-for': `1.2.3.${i}, 10.9.9.9` } },
      );
      expect(res.status).toBe(401);
    }
    const limited = await s.api.post(
      '/api/v1/auth/login',
      { email: 'y@example.com', password: 'nope-nope' },
      { headers: { 'x-forwarded-for': '7.7.7.7, 10.9.9.9' } },
    );
    expect(limited.status).toBe(429);
    const rows = await s.deps.db.selectFrom('audit_log').select('ip').where('action', '=', 'auth.login_failed').execute();
    expect(new Set(rows.map((r) => r.ip))).toEqual(new Set(['10.9.9.9']));
  });
});

describe('refused bearer tokens are audited, but a flood is not a write flood', () => {
  it('audits at most 60 refusals per address and minute, and refuses every request', async () => {
    s = await startAdminApi({ config: limits });
    const results = [];
    for (let i = 0; i < 70; i++)
      results.push((await s.api.get('/api/v1/auth/me', { token: `bogus-${i}`, headers: { 'x-forwarded-for': '10.4.4.4' } })).status);
    expect(new Set(results)).toEqual(new Set([401]));
    const audited = await s.deps.db.selectFrom('audit_log').select('id').where('action', '=', 'auth.token_rejected').execute();
    expect(audited).toHaveLength(60);
    s.clock.advance(60_001);
    await s.api.get('/api/v1/auth/me', { token: 'bogus-late', headers: { 'x-forwarded-for': '10.4.4.4' } });
    expect(await s.deps.db.selectFrom('audit_log').select('id').where('action', '=', 'auth.token_rejected').execute()).toHaveLength(61);
  });
});
