import {
  addressKey,
  countKnownAddresses,
  type DomainDeps,
  KNOWN_ADDRESSES_PER_ADMIN,
  loginAdminWithPassword,
  PasswordLoginInput,
  parseInput,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withRateLimits } from './with-rate-limits.ts';

// Issue 12.6: brute-force protection without a lock-out a stranger can trigger. Budgets of
// the defaults' shape, smaller: per address 20/min, per account and address 5/10 min, per
// account from unknown addresses 12/10 min.
let bed: DomainTestbed;
let deps: DomainDeps;
let verifies: number;
beforeEach(async () => {
  bed = await createDomainTestbed();
  const base = withRateLimits(bed.deps, {
    login: {
      per_ip: { limit: 20, window_seconds: 60 },
      per_subject: { limit: 5, window_seconds: 600 },
      per_account: { limit: 12, window_seconds: 600 },
    },
  });
  verifies = 0;
  // Counts the Argon2 checks (the real hasher does the work).
  deps = {
    ...base,
    passwords: {
      ...base.passwords,
      verify: (encoded, password) => {
        verifies++;
        return base.passwords.verify(encoded, password);
      },
    },
  };
});
afterEach(() => bed.close());

const RIGHT = 'admin-password-1';
const signIn = (ip: string, email: string, password = 'wrong-password') =>
  loginAdminWithPassword(deps, parseInput(PasswordLoginInput, { email, password }), { ip });
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: { type: string }) => err.type,
  );

describe('no lock-out a stranger can trigger (issue 12.6)', () => {
  it('wrong passwords from one address spend only that address budget: the owner still signs in from a known address and from a new one', async () => {
    const owner = await fixtures(bed.ctx()).admin({ role: 'owner' });
    expect(await outcome(signIn('198.51.100.2', owner.email, RIGHT))).toBe('ok'); // B becomes known
    for (let i = 0; i < 5; i++) expect(await outcome(signIn('203.0.113.66', owner.email))).toBe('unauthenticated');
    for (let i = 0; i < 5; i++) expect(await outcome(signIn('203.0.113.66', owner.email))).toBe('rate-limited');
    // The attacker's address stays throttled, right password included.
    expect(await outcome(signIn('203.0.113.66', owner.email, RIGHT))).toBe('rate-limited');
    expect(await outcome(signIn('198.51.100.2', owner.email, RIGHT))).toBe('ok');
    expect(await outcome(signIn('192.0.2.77', owner.email, RIGHT))).toBe('ok');
  });

  it('the account budget for unknown addresses bounds a guesser with many addresses; a known address is neither counted nor refused', async () => {
    const owner = await fixtures(bed.ctx()).admin({ role: 'owner' });
    expect(await outcome(signIn('198.51.100.2', owner.email, RIGHT))).toBe('ok'); // known
    bed.clock.advance(1000);
    // 11 more unknown attempts from many addresses use up the 12 (the first success was one).
    for (let i = 0; i < 11; i++) expect(await outcome(signIn(`203.0.113.${i}`, owner.email))).toBe('unauthenticated');
    expect(await outcome(signIn('203.0.113.200', owner.email))).toBe('rate-limited');
    expect(await outcome(signIn('192.0.2.77', owner.email, RIGHT))).toBe('rate-limited');
    // The known address is untouched by all of it, and its own attempts do not spend the account budget.
    for (let i = 0; i < 3; i++) expect(await outcome(signIn('198.51.100.2', owner.email, RIGHT))).toBe('ok');
  });

  it('a refused attempt costs the same Argon2 check as an admitted one and answers the same whatever the password', async () => {
    const owner = await fixtures(bed.ctx()).admin({ role: 'owner' });
    for (let i = 0; i < 5; i++) await outcome(signIn('203.0.113.66', owner.email));
    verifies = 0;
    const wrong = await outcome(signIn('203.0.113.66', owner.email));
    const right = await outcome(signIn('203.0.113.66', owner.email, RIGHT));
    const unknownEmail = await outcome(signIn('203.0.113.66', 'nobody@example.com'));
    expect([wrong, right, unknownEmail]).toEqual(['rate-limited', 'rate-limited', 'unauthenticated']);
    expect(verifies).toBe(3);
  });

  it('the address budget (any account) refuses before any work: one address spraying many accounts', async () => {
    for (let i = 0; i < 20; i++) expect(await outcome(signIn('203.0.113.9', `u${i}@example.com`))).toBe('unauthenticated');
    verifies = 0;
    expect(await outcome(signIn('203.0.113.9', 'u99@example.com'))).toBe('rate-limited');
    expect(verifies).toBe(0);
  });

  it('an IPv6 host is one address: its /64 shares one budget', async () => {
    for (let i = 0; i < 20; i++)
      expect(await outcome(signIn(`2001:db8:1:2::${i.toString(16)}`, `v${i}@example.com`))).toBe('unauthenticated');
    expect(await outcome(signIn('2001:db8:1:2:ffff:1:2:3', 'v99@example.com'))).toBe('rate-limited');
    expect(await outcome(signIn('2001:db8:1:3::1', 'v99@example.com'))).toBe('unauthenticated');
    expect(addressKey('2001:DB8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
  });

  it(`known addresses are bounded: the ${KNOWN_ADDRESSES_PER_ADMIN} most recent per admin`, async () => {
    const owner = await fixtures(bed.ctx()).admin({ role: 'owner' });
    for (let i = 0; i < KNOWN_ADDRESSES_PER_ADMIN + 3; i++) {
      bed.clock.advance(61_000);
      expect(await outcome(signIn(`198.51.100.${i}`, owner.email, RIGHT))).toBe('ok');
    }
    expect(await countKnownAddresses(bed.deps.db, owner.id)).toBe(KNOWN_ADDRESSES_PER_ADMIN);
  });
});
