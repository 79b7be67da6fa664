import { PASSWORD_CHANGE_WINDOW_MS, parseInput, RefreshInput, refreshSession } from '@svc/domain';
import { fixtures } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';
import { ME, outcome, portalBed } from './portal-support.ts';
import { withRateLimits } from './with-rate-limits.ts';

// Issue 29 item 7 (docs/portal.md, "Changing the password"): an access token alone does not
// change a password. With a password set, the current one is asked (checked with the sign-in's
// budgets); without it, the change is accepted only within 10 minutes of a magic-link or OAuth
// sign-in (access recovery, spec 5.7), whether or not a password is set.
const p = portalBed({}, (deps) =>
  withRateLimits(deps, {
    login: {
      per_ip: { limit: 100, window_seconds: 60 },
      per_subject: { limit: 5, window_seconds: 600 },
      per_account: { limit: 100, window_seconds: 600 },
    },
  }),
);
const OLD = 'the customer’s password';
const NEW = 'a brand new password';
const aCustomer = () => fixtures(p.bed.ctx()).client({ password: OLD });

describe('PUT /me/password asks for proof beyond the access token', () => {
  it('a password session: without the current password 403 (required), with a wrong one 403 (wrong, audited), with the right one the password changes', async () => {
    const c = await aCustomer();
    const pair = await p.login(c.email, OLD);
    // Sign-ins to look at the outcome come from elsewhere: this address's budget is the next test's.
    const signIn = (password: string) => outcome(p.login(c.email, password, '192.0.2.70'));
    const missing = await refusal(p.setPassword(pair, { password: NEW }));
    expect([missing.type, missing.extra, Object.keys(missing.errors ?? {})]).toEqual([
      'forbidden',
      { reason: 'current_password_required' },
      ['current_password'],
    ]);
    const wrong = await refusal(p.setPassword(pair, { password: NEW, current_password: 'not it' }));
    expect([wrong.type, wrong.extra]).toEqual(['forbidden', { reason: 'current_password_wrong' }]);
    expect(await signIn(NEW)).toBe('unauthenticated');
    await p.setPassword(pair, { password: NEW, current_password: OLD });
    expect(await signIn(NEW)).toBe('ok');
    expect(await signIn(OLD)).toBe('unauthenticated');
    const audit = await p.bed.deps.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('entity_id', '=', c.id)
      .where('action', 'in', ['client.password_change_refused', 'client.password_set'])
      .orderBy('id')
      .execute();
    expect(
      audit.map((a) => [a.action, (a.details as { reason?: string; proof?: string }).reason ?? (a.details as { proof: string }).proof]),
    ).toEqual([
      ['client.password_change_refused', 'current_password_required'],
      ['client.password_change_refused', 'current_password_wrong'],
      ['client.password_set', 'current_password'],
    ]);
  });

  it('wrong current passwords spend the sign-in budget of the email and address: past it 429, for the change and the sign-in alike', async () => {
    const c = await aCustomer();
    const ip = '198.51.100.31';
    const pair = await p.login(c.email, OLD, ip); // 1 of the 5
    for (let i = 0; i < 4; i++)
      expect(await outcome(p.setPassword(pair, { password: NEW, current_password: `guess ${i}` }, ip))).toBe('forbidden');
    expect(await outcome(p.setPassword(pair, { password: NEW, current_password: OLD }, ip))).toBe('rate-limited');
    expect(await outcome(p.login(c.email, OLD, ip))).toBe('rate-limited');
  });

  it('access recovery: within 10 minutes of a magic-link sign-in no current password is needed; later, or on a refreshed session, it is', async () => {
    const c = await aCustomer();
    const fresh = await p.redeem(await p.requestLink(c.email));
    await p.setPassword(fresh, { password: NEW });
    expect(await outcome(p.login(c.email, NEW))).toBe('ok');

    const later = await p.redeem(await p.requestLink(c.email, '192.0.2.61'));
    p.bed.clock.advance(PASSWORD_CHANGE_WINDOW_MS + 1000);
    expect(await outcome(p.setPassword(later, { password: OLD }))).toBe('forbidden');
    const refreshed = await refreshSession(p.deps(), 'client', parseInput(RefreshInput, { refresh_token: later.refresh_token }), {
      ip: ME,
    });
    expect(await outcome(p.setPassword(refreshed, { password: OLD }))).toBe('forbidden');
    // The current password still works on the old session.
    await p.setPassword(refreshed, { password: OLD, current_password: NEW });
    expect(await outcome(p.login(c.email, OLD))).toBe('ok');
  });

  it('a client without a password sets a first one only within 10 minutes of a magic-link sign-in', async () => {
    const c = await fixtures(p.bed.ctx()).client(); // made by an admin, without a password
    const pair = await p.redeem(await p.requestLink(c.email, '192.0.2.62'));
    p.bed.clock.advance(PASSWORD_CHANGE_WINDOW_MS + 1000);
    const stale = await refusal(p.setPassword(pair, { password: NEW, current_password: 'anything' }));
    expect([stale.type, stale.extra]).toEqual(['forbidden', { reason: 'current_password_required' }]);
    const fresh = await p.redeem(await p.requestLink(c.email, '192.0.2.63'));
    await p.setPassword(fresh, { password: NEW });
    expect(await outcome(p.login(c.email, NEW))).toBe('ok');
  });
});
