import {
  authorize,
  type DomainDeps,
  loginAdminWithPassword,
  PasswordLoginInput,
  parseInput,
  RefreshInput,
  refreshSession,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withRateLimits } from './with-rate-limits.ts';

// Every test starts with empty windows and its own clock.
let bed: DomainTestbed;
let deps: DomainDeps;
beforeEach(async () => {
  bed = await createDomainTestbed();
  deps = withRateLimits(bed.deps, {
    login: { per_ip: { limit: 3, window_seconds: 60 }, per_subject: { limit: 5, window_seconds: 600 } },
    refresh: { per_ip: { limit: 2, window_seconds: 30 }, per_subject: { limit: 100, window_seconds: 30 } },
  });
});
afterEach(() => bed.close());

const signIn = (ip: string, email: string, password = 'wrong-password') =>
  loginAdminWithPassword(deps, parseInput(PasswordLoginInput, { email, password }), { ip });
const refresh = (ip: string, token: string) => refreshSession(deps, 'admin', parseInput(RefreshInput, { refresh_token: token }), { ip });
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: { type: string; extra?: { retry_after_seconds?: number } }) =>
      err.type === 'rate-limited' ? `rate-limited ${err.extra?.retry_after_seconds}s` : err.type,
  );

describe('rate limits (spec 5.10): sign-in and refresh per address and per subject, sliding window', () => {
  it('sign-in is limited per address: past the limit the attempt is refused until the window has passed; another address is not affected', async () => {
    for (let i = 0; i < 3; i++) expect(await outcome(signIn('10.0.0.1', `u${i}@example.com`))).toBe('unauthenticated');
    expect(await outcome(signIn('10.0.0.1', 'u9@example.com'))).toBe('rate-limited 60s');
    expect(await outcome(signIn('10.0.0.2', 'u9@example.com'))).toBe('unauthenticated');
  });

  it('the window slides: capacity returns as each old attempt leaves the window, not all at once', async () => {
    await outcome(signIn('10.0.0.1', 'a@example.com')); // t=0
    bed.clock.advance(20_000);
    await outcome(signIn('10.0.0.1', 'b@example.com')); // t=20
    bed.clock.advance(20_000);
    await outcome(signIn('10.0.0.1', 'c@example.com')); // t=40
    bed.clock.advance(10_000);
    expect(await outcome(signIn('10.0.0.1', 'd@example.com'))).toBe('rate-limited 10s');
    bed.clock.advance(10_001); // t=60.001: only the t=0 attempt has left
    expect(await outcome(signIn('10.0.0.1', 'e@example.com'))).toBe('unauthenticated');
    expect(await outcome(signIn('10.0.0.1', 'f@example.com'))).toBe('rate-limited 20s');
  });

  it('sign-in is limited per account and address, even with the right password, until the window has passed', async () => {
    const admin = await fixtures(bed.ctx()).admin();
    for (let i = 0; i < 5; i++) {
      expect(await outcome(signIn('10.1.0.1', admin.email))).toBe('unauthenticated');
      bed.clock.advance(30_000); // stay inside the address's own per-minute budget
    }
    expect(await outcome(signIn('10.1.0.1', admin.email))).toMatch(/^rate-limited/);
    // The budget protects the account from this address, not the guess.
    expect(await outcome(signIn('10.1.0.1', admin.email, 'admin-password-1'))).toMatch(/^rate-limited/);
    bed.clock.advance(600_001);
    expect(await outcome(signIn('10.1.0.1', admin.email, 'admin-password-1'))).toBe('ok');
  });

  it('refresh is limited per address', async () => {
    expect(await outcome(refresh('10.2.0.1', 'x'.repeat(43)))).toBe('unauthenticated');
    expect(await outcome(refresh('10.2.0.1', 'x'.repeat(43)))).toBe('unauthenticated');
    expect(await outcome(refresh('10.2.0.1', 'x'.repeat(43)))).toBe('rate-limited 30s');
  });

  it('refresh is limited per subject across addresses; an unknown token has no subject to count against', async () => {
    deps = withRateLimits(bed.deps, {
      refresh: { per_ip: { limit: 100, window_seconds: 30 }, per_subject: { limit: 2, window_seconds: 30 } },
    });
    const admin = await fixtures(bed.ctx()).admin();
    const pair = await signIn('10.3.0.9', admin.email, 'admin-password-1');
    const first = await refreshSession(deps, 'admin', parseInput(RefreshInput, { refresh_token: pair.refresh_token }), { ip: '10.3.0.1' });
    const second = await refreshSession(deps, 'admin', parseInput(RefreshInput, { refresh_token: first.refresh_token }), {
      ip: '10.3.0.2',
    });
    expect(await outcome(refresh('10.3.0.3', second.refresh_token))).toBe('rate-limited 30s');
    expect(await outcome(refresh('10.3.0.4', 'whatever'))).toBe('unauthenticated');
  });
});

describe('refused bearer tokens are audited, but a flood is not a write flood', () => {
  it('audits at most 60 refusals per address and minute, and refuses every one', async () => {
    const check = (token: string) =>
      authorize(bed.deps, `Bearer ${token}`, { scope: 'admin' }, { ip: '10.4.4.4', route: () => 'GET /auth/me' });
    const audited = async () =>
      (await bed.deps.db.selectFrom('audit_log').select('ip').where('action', '=', 'auth.token_rejected').execute()).length;
    const results = new Set<string>();
    for (let i = 0; i < 70; i++) results.add(await outcome(check(`bogus-${i}`)));
    expect(results).toEqual(new Set(['unauthenticated']));
    expect(await audited()).toBe(60);
    bed.clock.advance(60_001);
    expect(await outcome(check('bogus-late'))).toBe('unauthenticated');
    expect(await audited()).toBe(61);
  });
});
