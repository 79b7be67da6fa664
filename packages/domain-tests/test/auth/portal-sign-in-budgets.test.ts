import { countActiveSessions } from '@svc/domain';
import { fixtures } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { outcome, portalBed } from './portal-support.ts';
import { withRateLimits } from './with-rate-limits.ts';

// Issue 29 item 4 (docs/portal.md, "Budgets"): portal password guessing has an account-wide
// budget like the admins' (rate_limits.login.per_account, the portal's own counters), counted
// only for addresses the customer never signed in from, and it locks nobody out: the magic link
// is never refused by it, and an address the customer signed in from (by password or link) is
// neither counted nor refused. Windows of the defaults' shape, smaller: per address 20/min, per
// email and address 5/10 min, per email from unknown addresses 12/10 min.
const p = portalBed({}, (deps) =>
  withRateLimits(deps, {
    login: {
      per_ip: { limit: 20, window_seconds: 60 },
      per_subject: { limit: 5, window_seconds: 600 },
      per_account: { limit: 12, window_seconds: 600 },
    },
  }),
);
const RIGHT = 'the customer’s password';
const aCustomer = () => fixtures(p.bed.ctx()).client({ password: RIGHT });
const guess = (email: string, ip: string, password = 'a wrong guess') => outcome(p.login(email, password, ip));

describe('the account-wide budget of portal password sign-in', () => {
  it('wrong passwords from many addresses spend the account’s budget: then every new address is refused (429) for that account only', async () => {
    const c = await aCustomer();
    const other = await aCustomer();
    const answers: string[] = [];
    for (let a = 0; a < 3; a++) for (let i = 0; i < 5; i++) answers.push(await guess(c.email, `203.0.113.${a}`));
    expect(answers.slice(0, 12)).toEqual(Array(12).fill('unauthenticated'));
    expect(answers.slice(12)).toEqual(['rate-limited', 'rate-limited', 'rate-limited']);
    // A fresh address is refused for this account, right password included; another account is untouched.
    expect(await guess(c.email, '198.51.100.9', RIGHT)).toBe('rate-limited');
    expect(await guess(other.email, '203.0.113.2', RIGHT)).toBe('ok');
    // The window passes and the account answers again.
    p.bed.clock.advance(600_000 + 1000);
    expect(await guess(c.email, '198.51.100.9', RIGHT)).toBe('ok');
  });

  it('an address the customer signed in from, by password or by magic link, is neither counted nor refused; the magic link is never refused', async () => {
    const c = await aCustomer();
    expect(await guess(c.email, '192.0.2.50', RIGHT)).toBe('ok'); // by password: known now (and 1 of the 12)
    await p.redeem(await p.requestLink(c.email, '192.0.2.51'), '192.0.2.51'); // by link: known too
    for (let i = 0; i < 11; i++) expect(await guess(c.email, `203.0.113.${100 + i}`)).toBe('unauthenticated');
    expect(await guess(c.email, '203.0.113.200', RIGHT)).toBe('rate-limited');
    // The customer's own addresses keep signing in, and do not spend the account's budget.
    for (let i = 0; i < 3; i++) expect(await guess(c.email, '192.0.2.50', RIGHT)).toBe('ok');
    expect(await guess(c.email, '192.0.2.51', RIGHT)).toBe('ok');
    // The magic link, from an address never seen, still signs in.
    const pair = await p.redeem(await p.requestLink(c.email, '198.51.100.77'), '198.51.100.77');
    expect(pair.access_token).toEqual(expect.any(String));
    expect(await countActiveSessions(p.bed.deps.db, { type: 'client', id: c.id }, p.bed.clock.now())).toBeGreaterThanOrEqual(6);
  });

  it('a refused attempt answers the same whatever the password, and is not a sign-in', async () => {
    const c = await aCustomer();
    for (let i = 0; i < 12; i++) await guess(c.email, `198.18.0.${i}`);
    const sessionsBefore = await countActiveSessions(p.bed.deps.db, { type: 'client', id: c.id }, p.bed.clock.now());
    expect(await guess(c.email, '198.18.1.1', RIGHT)).toBe('rate-limited');
    expect(await guess(c.email, '198.18.1.2', 'wrong')).toBe('rate-limited');
    expect(await countActiveSessions(p.bed.deps.db, { type: 'client', id: c.id }, p.bed.clock.now())).toBe(sessionsBefore);
  });
});
