import {
  type PortalCtx,
  parseInput,
  SetPasswordInput,
  setClientPassword,
  signInWithProfile,
  UpdateClientInput,
  updateClient,
  withActor,
} from '@svc/domain';
import { describe, expect, it } from 'vitest';
import { outcome, portalBed } from './portal-support.ts';

// Issue 29 item 1 (docs/portal.md, "A password only with a confirmed email"): a stranger who
// registers someone else's address with a password of their choosing must own nothing once the
// address's owner confirms it by a sign-in link or a provider that vouches for it. A password
// becomes a client's only with a confirmed email: the registration's own confirmation link sets
// the one chosen at registration; every other confirmation leaves none.
const p = portalBed({ SVC_PORTAL_REGISTRATION: 'open' });
const STRANGER = '203.0.113.66';
const STRANGERS_PASSWORD = 'the stranger chose this';
const OWNERS_PASSWORD = 'the owner chose this one';

let n = 0;
const email = (tag: string) => `${tag}-${++n}@example.com`;
const passwordOf = async (id: string) =>
  (await p.bed.deps.db.selectFrom('clients').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow()).password_hash;

describe('account pre-hijacking: a password set before the email was confirmed is never kept', () => {
  it('a stranger registers the victim’s email; the victim signs in by a requested link; the stranger’s password is refused', async () => {
    const victim = email('victim');
    const reg = await p.register(victim, STRANGERS_PASSWORD, STRANGER);
    expect(await passwordOf(reg.id)).toBeNull();
    // A second registration is 409, so the victim asks for a link instead.
    expect(await outcome(p.register(victim, OWNERS_PASSWORD))).toBe('conflict');
    const pair = await p.redeem(await p.requestLink(victim));
    expect(pair.access_token).toEqual(expect.any(String));
    expect(await outcome(p.login(victim, STRANGERS_PASSWORD, STRANGER))).toBe('unauthenticated');
    expect(await passwordOf(reg.id)).toBeNull();
    // The registration's own link, used after the email was confirmed, sets nothing either.
    await p.redeem(await p.tokenOf(victim, 'registration_confirmation'));
    expect(await outcome(p.login(victim, STRANGERS_PASSWORD, STRANGER))).toBe('unauthenticated');
    const confirmed = await p.bed.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'client.email_confirmed')
      .where('entity_id', '=', reg.id)
      .execute();
    expect(confirmed.map((a) => a.details)).toEqual([{ method: 'magic_link', password: 'none' }]);
  });

  it('the registration’s own confirmation link, in the browser that registered, sets the password chosen at registration; before it, the password only says “confirm first”', async () => {
    const me = email('registrant');
    const reg = await p.register(me, OWNERS_PASSWORD);
    expect(await passwordOf(reg.id)).toBeNull();
    const early = await outcome(p.login(me, OWNERS_PASSWORD));
    expect(early).toBe('forbidden'); // rule 1: right password, email unconfirmed
    expect(await outcome(p.login(me, 'not the password'))).toBe('unauthenticated');
    await p.redeem(await p.tokenOf(me, 'registration_confirmation'), undefined, [reg.browserKey]);
    expect(await passwordOf(reg.id)).not.toBeNull();
    expect(await outcome(p.login(me, OWNERS_PASSWORD))).toBe('ok');
  });

  it('a second registration of an unconfirmed email is 409 and changes nothing: the first registrant’s link sets their password, not the second’s', async () => {
    const me = email('first');
    const reg = await p.register(me, OWNERS_PASSWORD);
    expect(await outcome(p.register(me, STRANGERS_PASSWORD, STRANGER))).toBe('conflict');
    await p.redeem(await p.tokenOf(me, 'registration_confirmation'), undefined, [reg.browserKey]);
    expect(await outcome(p.login(me, OWNERS_PASSWORD))).toBe('ok');
    expect(await outcome(p.login(me, STRANGERS_PASSWORD, STRANGER))).toBe('unauthenticated');
  });

  it('the victim clicks the stranger’s registration link in their own mailbox and browser: confirmed and signed in, without the stranger’s password', async () => {
    const victim = email('clicker');
    const reg = await p.register(victim, STRANGERS_PASSWORD, STRANGER);
    // The victim's browser never held the stranger's registration cookie; another browser's key is no better.
    const other = await p.register(email('other'), OWNERS_PASSWORD);
    const pair = await p.redeem(await p.tokenOf(victim, 'registration_confirmation'), undefined, [other.browserKey]);
    expect(pair.access_token).toEqual(expect.any(String));
    expect(await passwordOf(reg.id)).toBeNull();
    expect(await outcome(p.login(victim, STRANGERS_PASSWORD, STRANGER))).toBe('unauthenticated');
    // Signed in by the link moments ago, the victim chooses their own password.
    await p.setPassword(pair, { password: OWNERS_PASSWORD });
    expect(await outcome(p.login(victim, OWNERS_PASSWORD))).toBe('ok');
  });

  it('a registration whose link expired has no password at all: the password is refused like a wrong one, and a sign-in link confirms without one', async () => {
    const me = email('late');
    const reg = await p.register(me, OWNERS_PASSWORD);
    p.bed.clock.advance(15 * 60_000 + 1000);
    expect(await outcome(p.login(me, OWNERS_PASSWORD))).toBe('unauthenticated');
    await p.redeem(await p.requestLink(me));
    expect(await passwordOf(reg.id)).toBeNull();
  });

  it('a verified OAuth profile that confirms the email keeps no password set before it (an admin’s included)', async () => {
    const victim = email('oauth-victim');
    const reg = await p.register(victim, STRANGERS_PASSWORD, STRANGER);
    // The one other way a password lands on an unconfirmed record: an admin sets it.
    await updateClient(p.bed.ctx(), reg.id, parseInput(UpdateClientInput, { password: STRANGERS_PASSWORD }));
    expect(await passwordOf(reg.id)).not.toBeNull();
    const signedIn = await signInWithProfile(
      p.deps(),
      'client',
      'test',
      { provider_user_id: `victim-${n}`, email: victim, email_verified: true },
      { ip: '192.0.2.44' },
    );
    expect(signedIn).toHaveProperty('pair');
    expect(await passwordOf(reg.id)).toBeNull();
    expect(await outcome(p.login(victim, STRANGERS_PASSWORD, STRANGER))).toBe('unauthenticated');
    // The stranger's registration link, in the victim's mailbox, no longer sets anything.
    await p.redeem(await p.tokenOf(victim, 'registration_confirmation'));
    expect(await passwordOf(reg.id)).toBeNull();
    const confirmed = await p.bed.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'client.email_confirmed')
      .where('entity_id', '=', reg.id)
      .execute();
    expect(confirmed.map((a) => a.details)).toEqual([{ method: 'oauth:test', password: 'cleared' }]);
  });

  it('an unconfirmed client cannot change a password: no token of theirs is honoured', async () => {
    const me = email('unconfirmed');
    const reg = await p.register(me, OWNERS_PASSWORD);
    // No session can exist unconfirmed (rule 1); a context naming the client is refused by the verb all the same.
    const ctx = withActor(p.deps(), { type: 'client', id: reg.id, ip: STRANGER }) as PortalCtx;
    expect(await outcome(setClientPassword(ctx, 'ses_none', parseInput(SetPasswordInput, { password: STRANGERS_PASSWORD })))).toBe(
      'unauthenticated',
    );
    expect(await passwordOf(reg.id)).toBeNull();
  });
});
