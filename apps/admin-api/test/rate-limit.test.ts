import { OWNER, setupOwner, type TestServer } from '@svc/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// The limits themselves (per address, per subject, the sliding window, refresh, audited
// bearer refusals) are proven on the use cases: packages/domain-tests/test/auth/rate-limits.test.ts.
let s: TestServer | undefined;
afterEach(async () => {
  await s?.stop();
  s = undefined;
});

const limits = {
  http: { trust_proxy: true },
  rate_limits: { login: { per_ip: { limit: 3, window_seconds: 60 }, per_subject: { limit: 5, window_seconds: 600 } } },
};
const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
const attempt = (ip: string, email: string) => s!.api.post('/api/v1/auth/login', { email, password: 'wrong-password' }, from(ip));

describe('rate limits over HTTP (spec 5.10)', () => {
  it('a limited sign-in is 429 problem+json with Retry-After; another address is not affected', async () => {
    s = await startAdminApi({ config: limits });
    for (let i = 0; i < 3; i++) expect((await attempt('10.0.0.1', `u${i}@example.com`)).status).toBe(401);
    const limited = await attempt('10.0.0.1', 'u9@example.com');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toBe('application/problem+json');
    expect(limited.body.type).toBe('urn:svc:problem:rate-limited');
    expect(Number(limited.headers.get('retry-after'))).toBe(60);
    expect((await attempt('10.0.0.2', 'u9@example.com')).status).toBe(401);
  });
});

describe('no lock-out a stranger can trigger (issue 12.6), with the default budgets', () => {
  it('12 wrong passwords from address A do not stop the owner signing in from a known address B nor from a new address C; A stays throttled', async () => {
    s = await startAdminApi({ config: { http: { trust_proxy: true } } });
    await setupOwner(s);
    const signIn = (ip: string, password: string) => s!.api.post('/api/v1/auth/login', { email: OWNER.email, password }, from(ip));
    expect((await signIn('198.51.100.2', OWNER.password)).status).toBe(200); // B signed in before
    const answers: number[] = [];
    for (let i = 0; i < 12; i++) answers.push((await signIn('203.0.113.66', `guess-${i}-wrong`)).status);
    expect(answers).toEqual([...Array(10).fill(401), 429, 429]);
    // A is still throttled, whatever it sends.
    const fromA = await signIn('203.0.113.66', OWNER.password);
    expect(fromA.status).toBe(429);
    expect(fromA.body.access_token).toBeUndefined();
    expect((await signIn('198.51.100.2', OWNER.password)).status).toBe(200);
    expect((await signIn('192.0.2.77', OWNER.password)).status).toBe(200);
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
