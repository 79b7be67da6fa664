import { fixtures } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { ME, outcome, portalBed } from './portal-support.ts';
import { withRateLimits } from './with-rate-limits.ts';

// Spec 3.1 rules 2-3, 5.8 at the verb registerWithPassword: the mode decides whether anyone
// may register and in which status; an email already taken (a rejected one too) is refused and
// audited; two registrations of one email at once make one client; nobody signs in before the
// confirmation link confirms the email. The 404/409/400 answers are the portal API's tests.
const generous = { register: { per_ip: { limit: 1000, window_seconds: 60 }, per_subject: { limit: 1000, window_seconds: 60 } } };
const closed = portalBed({ SVC_PORTAL_REGISTRATION: 'closed' });
const application = portalBed({ SVC_PORTAL_REGISTRATION: 'application' }, (d) => withRateLimits(d, generous));
const open = portalBed({ SVC_PORTAL_REGISTRATION: 'open' }, (d) => withRateLimits(d, generous));
const PASSWORD = 'a long customer password';

let n = 0;
const email = (tag: string) => `${tag}-${++n}@example.com`;
const clientsWith = (bed: typeof open, address: string) =>
  bed.bed.deps.db
    .selectFrom('clients')
    .select(['id', 'status', 'email_verified_at', 'password_hash'])
    .where('email', '=', address)
    .execute();

describe('registration by mode', () => {
  it('closed: refused as not found, and nothing is created', async () => {
    const address = email('closed');
    expect(await outcome(closed.register(address, PASSWORD))).toBe('not-found');
    expect(await clientsWith(closed, address)).toEqual([]);
  });

  it('application: a pending client; its link confirms the email, but sign-in waits for approval', async () => {
    const address = email('applicant');
    const { browserKey } = await application.register(address, PASSWORD);
    const [row] = await clientsWith(application, address);
    expect(row).toMatchObject({ status: 'pending', email_verified_at: null, password_hash: null });
    const token = await application.tokenOf(address, 'registration_confirmation');
    expect(await outcome(application.redeem(token, ME, [browserKey]))).toBe('forbidden');
    const [after] = await clientsWith(application, address);
    expect(after?.email_verified_at).not.toBeNull();
    expect(await outcome(application.login(address, PASSWORD))).toBe('forbidden');
  });

  it('open: an active client who signs in only once the link confirmed the email; then the password is theirs', async () => {
    const address = email('walk-in');
    const { browserKey } = await open.register(address, PASSWORD);
    expect((await clientsWith(open, address))[0]?.status).toBe('active');
    expect(await outcome(open.login(address, PASSWORD))).not.toBe('ok');
    const token = await open.tokenOf(address, 'registration_confirmation');
    expect(await outcome(open.redeem(token, ME, [browserKey]))).toBe('ok');
    expect(await outcome(open.login(address, PASSWORD))).toBe('ok');
  });
});

describe('one client per email', () => {
  it('an email that is taken, or rejected, is refused (conflict), audited as email_taken, and changes nothing', async () => {
    const f = fixtures(open.bed.ctx());
    const taken = await f.client();
    const rejected = await f.client({ status: 'rejected' });
    for (const c of [taken, rejected]) {
      const before = await clientsWith(open, c.email);
      expect(await outcome(open.register(c.email, PASSWORD))).toBe('conflict');
      expect(await clientsWith(open, c.email)).toEqual(before);
    }
    const refusals = await open.bed.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'client.registration_refused')
      .execute();
    const reasons = refusals
      .map((r) => r.details as { email: string; reason: string })
      .filter((d) => d.email === taken.email || d.email === rejected.email);
    expect(reasons.map((d) => d.reason)).toEqual(['email_taken', 'email_taken']);
  });

  it('two registrations of one email at once: exactly one client, the other refused', async () => {
    const address = email('twice');
    const results = await Promise.all([
      outcome(open.register(address, PASSWORD)),
      outcome(open.register(address, 'another long password')),
    ]);
    expect(results.sort()).toEqual(['conflict', 'ok']);
    expect(await clientsWith(open, address)).toHaveLength(1);
  });
});
