import {
  MAGIC_LINK_TTL_MS,
  MagicLinkRequestInput,
  parseInput,
  requestMagicLink,
  sha256Hex,
  UpdateClientInput,
  updateClient,
} from '@svc/domain';
import { fixtures, until } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { ME, outcome, portalBed } from './portal-support.ts';
import { withRateLimits } from './with-rate-limits.ts';

// Spec 3.3, 5.7, 8 at the verbs (requestMagicLink, redeemMagicLink): the same answer for any
// email, a link only for a client who could use it, one use, 15 minutes, stored as a hash, a
// mailbox not flooded. The HTTP answers (200 either way, 401/403/429 problems, the landing page)
// are the portal API's tests.
const p = portalBed({}, (deps) =>
  withRateLimits(deps, {
    magic_link: {
      per_ip: { limit: 1000, window_seconds: 60 },
      per_subject: { limit: 1000, window_seconds: 60 },
      mails_per_email: { limit: 3, window_seconds: 3600 },
    },
  }),
);

const aCustomer = (status?: 'active' | 'disabled' | 'pending' | 'rejected') => fixtures(p.bed.ctx()).client(status ? { status } : {});

const audit = async (action: string, email: string) =>
  (await p.bed.deps.db.selectFrom('audit_log').select('details').where('action', '=', action).orderBy('id').execute())
    .map((a) => a.details as { email?: string; sent?: boolean; reason?: string })
    .filter((d) => d.email === email);

const ask = async (email: string) => {
  const answer = await requestMagicLink(p.deps(), parseInput(MagicLinkRequestInput, { email }), { ip: ME });
  await answer.background;
  return answer;
};

const mailsTo = (email: string) => p.mails.filter((m) => m.to === email && m.category === 'magic_link');
/** Mails leave after the unit commits, through the mail queue: wait for `n` of them. */
const mailed = (email: string, n: number) => until(`${n} magic link mails to ${email}`, () => mailsTo(email).length >= n);

describe('asking for a magic link', () => {
  it('an unknown email gets the same answer as a known one, no mail, and an audit row that says why', async () => {
    const known = await aCustomer();
    const a = await ask(known.email);
    const b = await ask('nobody-here@example.com');
    expect(Object.keys(a)).toEqual(Object.keys(b));
    await mailed(known.email, 1);
    // The unknown email's request ran after the known one's mail was queued.
    await ask(known.email);
    await mailed(known.email, 2);
    expect(mailsTo('nobody-here@example.com')).toHaveLength(0);
    expect(await audit('auth.magic_link_requested', 'nobody-here@example.com')).toEqual([
      { email: 'nobody-here@example.com', sent: false, reason: 'unknown_email' },
    ]);
  });

  it('a disabled or rejected client gets no link; a pending one does (the link confirms the email)', async () => {
    const disabled = await aCustomer('disabled');
    const rejected = await aCustomer('rejected');
    const pending = await aCustomer('pending');
    for (const c of [disabled, rejected, pending]) await ask(c.email);
    await mailed(pending.email, 1);
    expect(mailsTo(disabled.email)).toHaveLength(0);
    expect(mailsTo(rejected.email)).toHaveLength(0);
    expect(mailsTo(pending.email)).toHaveLength(1);
    expect((await audit('auth.magic_link_requested', disabled.email)).at(-1)).toMatchObject({ sent: false, reason: 'client_disabled' });
  });

  it('mails to one email stop at rate_limits.magic_link.mails_per_email; the answer stays the same and the last link still works', async () => {
    const c = await aCustomer();
    for (let i = 0; i < 5; i++) await ask(c.email);
    await mailed(c.email, 3);
    expect((await audit('auth.magic_link_requested', c.email)).map((d) => d.sent)).toEqual([true, true, true, false, false]);
    const last = await p.tokenOf(c.email, 'magic_link');
    expect(await outcome(p.redeem(last))).toBe('ok');
  });

  it('the token is stored only as its SHA-256, with an expiry 15 minutes on', async () => {
    const c = await aCustomer();
    const token = await p.requestLink(c.email);
    const rows = await p.bed.deps.db.selectFrom('magic_link_tokens').selectAll().where('client_id', '=', c.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.token_hash).toBe(sha256Hex(token));
    expect(JSON.stringify(rows)).not.toContain(token);
    expect((rows[0]?.expires_at as Date).getTime() - (rows[0]?.created_at as Date).getTime()).toBe(MAGIC_LINK_TTL_MS);
  });
});

describe('redeeming a magic link', () => {
  it('signs in once: the second use is refused and audited as a used token', async () => {
    const c = await aCustomer();
    const token = await p.requestLink(c.email);
    const pair = await p.redeem(token);
    expect(pair.access_token).toBeTruthy();
    expect(await outcome(p.redeem(token))).toBe('unauthenticated');
    const failed = await p.bed.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'auth.login_failed')
      .where('entity_id', '=', c.id)
      .execute();
    expect(failed.map((f) => (f.details as { reason: string }).reason)).toEqual(['used_token']);
  });

  it('two redeems of one link at once: exactly one signs in', async () => {
    const c = await aCustomer();
    const token = await p.requestLink(c.email);
    const results = await Promise.all([outcome(p.redeem(token)), outcome(p.redeem(token)), outcome(p.redeem(token))]);
    expect(results.sort()).toEqual(['ok', 'unauthenticated', 'unauthenticated']);
  });

  it('expires after 15 minutes', async () => {
    const c = await aCustomer();
    const token = await p.requestLink(c.email);
    p.bed.clock.advance(MAGIC_LINK_TTL_MS);
    expect(await outcome(p.redeem(token))).toBe('unauthenticated');
    const fresh = await p.requestLink(c.email);
    expect(await outcome(p.redeem(fresh))).toBe('ok');
  });

  it('a token that was never issued is refused, and so is a link sent before the client was disabled (forbidden)', async () => {
    expect(await outcome(p.redeem('not-a-token-we-made'))).toBe('unauthenticated');
    const c = await aCustomer();
    const token = await p.requestLink(c.email);
    await updateClient(p.bed.ctx(), c.id, parseInput(UpdateClientInput, { status: 'disabled' }));
    expect(await outcome(p.redeem(token))).toBe('forbidden');
  });

  it('a pending client’s link confirms the email but signs in only once approved', async () => {
    const c = await aCustomer('pending');
    const token = await p.requestLink(c.email);
    expect(await outcome(p.redeem(token))).toBe('forbidden');
    const row = await p.bed.deps.db
      .selectFrom('clients')
      .select(['email_verified_at', 'status'])
      .where('id', '=', c.id)
      .executeTakeFirstOrThrow();
    expect(row.email_verified_at).not.toBeNull();
    expect(row.status).toBe('pending');
  });

  it('a sign-in link never sets a password', async () => {
    const c = await aCustomer();
    const token = await p.requestLink(c.email);
    await p.redeem(token);
    const row = await p.bed.deps.db.selectFrom('clients').select('password_hash').where('id', '=', c.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toBeNull();
  });
});
