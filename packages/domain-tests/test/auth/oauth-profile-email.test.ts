import { checkedProfile, issueSession, linkFromSettings, type OAuthProfile, signInWithProfile } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { MALFORMED_EMAILS } from '@svc/testkit/hostile-text';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Issue 29 item 5 at the verbs that take a provider's profile: its email passes the one Email
// rule of every surface before anything is looked up or stored, whatever adapter made the
// profile; one that fails counts as no email (the path of a provider that gives none).
let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed({ env: { SVC_PORTAL_REGISTRATION: 'open' } });
});
afterAll(() => bed?.close());

const meta = { ip: '192.0.2.7' };
let n = 0;
const profile = (email: string | null, verified = true): OAuthProfile => ({
  provider_user_id: `user-${++n}`,
  email,
  email_verified: verified,
});
const clientEmails = () => bed.deps.db.selectFrom('clients').select('email').orderBy('email').execute();

describe('OAuth profile emails pass the one Email rule', () => {
  it('signInWithProfile on the portal (registration open): every malformed verified email is refused as no_email and nothing is stored', async () => {
    const before = await clientEmails();
    for (const email of MALFORMED_EMAILS) {
      const outcome = await signInWithProfile(bed.deps, 'client', 'test', profile(email), meta);
      expect(outcome, JSON.stringify(email)).toMatchObject({ refused: { reason: 'no_email' } });
    }
    expect(await clientEmails()).toEqual(before);
    expect(await bed.deps.db.selectFrom('client_oauth_identities').selectAll().execute()).toEqual([]);
  });

  it("the Kelvin sign is not the customer's k: no automatic link to karol@, the record untouched; the admin surface alike", async () => {
    const f = fixtures(bed.ctx());
    const karol = await f.client({ email: 'karol@example.com' });
    const kate = await f.admin({ email: 'kate@example.com' });
    const row = () => bed.deps.db.selectFrom('clients').selectAll().where('id', '=', karol.id).executeTakeFirstOrThrow();
    const before = await row();
    expect(await signInWithProfile(bed.deps, 'client', 'test', profile('\u212Aarol@example.com'), meta)).toMatchObject({
      refused: { reason: 'no_email' },
    });
    expect(await signInWithProfile(bed.deps, 'admin', 'test', profile('\u212Aate@example.com'), meta)).toMatchObject({
      refused: { reason: 'no_email' },
    });
    expect(await row()).toEqual(before);
    expect(await bed.deps.db.selectFrom('admin_oauth_identities').selectAll().where('admin_id', '=', kate.id).execute()).toEqual([]);
  });

  it('a well-formed address in capitals with spaces around it is taken, lower-cased', async () => {
    const outcome = await signInWithProfile(bed.deps, 'client', 'test', profile('  Erin@Example.COM '), meta);
    expect(outcome).toHaveProperty('pair');
    expect(await bed.deps.db.selectFrom('clients').select('email').where('email', '=', 'erin@example.com').execute()).toHaveLength(1);
  });

  it('linkFromSettings links the identity but stores a malformed email as none', async () => {
    const admin = await fixtures(bed.ctx()).admin();
    const pair = await issueSession(bed.deps, bed.deps.db, { type: 'admin', id: admin.id }, 'password', meta);
    const { sid } = await bed.deps.tokens.verifyAccess(pair.access_token, 'admin');
    const linked = await linkFromSettings(
      bed.deps,
      'admin',
      'test',
      { subjectId: admin.id, sessionId: sid },
      profile('mallory@example.com\r\nbcc: everyone@example.com'),
      meta,
    );
    expect(linked).toMatchObject({ provider: 'test', email: null });
    const stored = await bed.deps.db.selectFrom('admin_oauth_identities').select('email').where('admin_id', '=', admin.id).execute();
    expect(stored).toEqual([{ email: null }]);
  });

  it("a refused email takes the provider's email_verified with it (checkedProfile, which both verbs apply first)", () => {
    expect(checkedProfile(profile('\u212Aarol@example.com', true))).toMatchObject({ email: null, email_verified: false });
    expect(checkedProfile(profile('Karol@Example.com', true))).toMatchObject({ email: 'karol@example.com', email_verified: true });
  });
});
