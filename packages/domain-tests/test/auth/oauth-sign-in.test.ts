import type { OAuthSurface } from '@svc/db';
import { issueSession, linkFromSettings, listIdentities, type OAuthProfile, signInWithProfile, unlinkIdentity } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';

// Spec 5.6 rules 3-6 and 5.8 at the verbs that take a provider's profile (signInWithProfile,
// linkFromSettings, unlinkIdentity): who signs in, who is linked, who is registered in which
// mode, and that an admin keeps a way in. The provider round trip (state, PKCE, the browser
// binding) is oauth-browser-binding.test.ts; the HTTP answers are the portal API's tests.

/** Two admin providers and two portal providers configured (their issuer is never called here). */
const providers = (surface: 'AUTH' | 'PORTAL') =>
  Object.fromEntries(
    ['TEST', 'OTHER'].flatMap((p) => [
      [`SVC_${surface}_OAUTH_${p}_CLIENT_ID`, `id-${p}`],
      [`SVC_${surface}_OAUTH_${p}_CLIENT_SECRET`, `secret-${p}`],
      [`SVC_${surface}_OAUTH_${p}_ISSUER`, 'https://idp.example.com'],
    ]),
  );

const beds: Record<string, DomainTestbed> = {};
beforeAll(async () => {
  const modes: Record<string, Record<string, string>> = {
    closed: { SVC_PORTAL_REGISTRATION: 'closed' },
    application: { SVC_PORTAL_REGISTRATION: 'application' },
    open: { SVC_PORTAL_REGISTRATION: 'open' },
    oauthOnly: { SVC_AUTH_PASSWORD_LOGIN: 'false' },
  };
  for (const [name, env] of Object.entries(modes))
    beds[name] = await createDomainTestbed({ env: { ...providers('AUTH'), ...providers('PORTAL'), ...env } });
});
afterAll(async () => {
  for (const bed of Object.values(beds)) await bed.close();
});
const bed = (name: 'closed' | 'application' | 'open' | 'oauthOnly') => beds[name] as DomainTestbed;

const meta = { ip: '192.0.2.44' };
let n = 0;
const profile = (email: string | null, verified = true, provider_user_id = `user-${++n}`): OAuthProfile => ({
  provider_user_id,
  email,
  email_verified: verified,
});
const signIn = (b: DomainTestbed, surface: OAuthSurface, p: OAuthProfile, provider = 'test') =>
  signInWithProfile(b.deps, surface, provider, p, meta);
const identities = (b: DomainTestbed, surface: OAuthSurface, id: string) =>
  listIdentities(b.deps, surface, id).then((l) => l.map((i) => i.provider));
const count = async (b: DomainTestbed, table: 'admins' | 'clients') => (await b.deps.db.selectFrom(table).select('id').execute()).length;

/** A live session of the subject, as settings links from. */
const sessionOf = async (b: DomainTestbed, type: 'admin' | 'client', id: string) => {
  const pair = await issueSession(b.deps, b.deps.db, { type, id }, 'password', meta);
  return (await b.deps.tokens.verifyAccess(pair.access_token, type)).sid;
};
const link = async (b: DomainTestbed, surface: OAuthSurface, subjectId: string, p: OAuthProfile, provider = 'test') =>
  linkFromSettings(
    b.deps,
    surface,
    provider,
    { subjectId, sessionId: await sessionOf(b, surface === 'admin' ? 'admin' : 'client', subjectId) },
    p,
    meta,
  );

describe('admin surface: sign-in by a provider', () => {
  it('a verified email of an existing admin links automatically and signs in', async () => {
    const b = bed('closed');
    const admin = await fixtures(b.ctx()).admin();
    expect(await signIn(b, 'admin', profile(admin.email))).toHaveProperty('pair');
    expect(await identities(b, 'admin', admin.id)).toEqual(['test']);
  });

  it('a linked identity signs in by (provider, provider user id), even after the email changed at the provider', async () => {
    const b = bed('closed');
    const admin = await fixtures(b.ctx()).admin();
    const first = profile(admin.email);
    await signIn(b, 'admin', first);
    expect(await signIn(b, 'admin', { ...first, email: 'renamed-at-the-provider@example.com' })).toHaveProperty('pair');
    expect(await signIn(b, 'admin', { ...first, email: null })).toHaveProperty('pair');
  });

  it('an unverified email of an existing admin is refused and nothing is linked', async () => {
    const b = bed('closed');
    const admin = await fixtures(b.ctx()).admin();
    expect(await signIn(b, 'admin', profile(admin.email, false))).toMatchObject({ refused: { reason: 'email_not_verified' } });
    expect(await identities(b, 'admin', admin.id)).toEqual([]);
  });

  it('no admin registers by a provider: an unknown email is refused and no admin is made', async () => {
    const b = bed('open');
    const before = await count(b, 'admins');
    expect(await signIn(b, 'admin', profile('stranger@example.com'))).toMatchObject({ refused: { reason: 'no_account' } });
    expect(await count(b, 'admins')).toBe(before);
  });
});

describe('linking from settings', () => {
  it('links whatever the provider email; an identity of another admin, or a second one of a provider, is a conflict', async () => {
    const b = bed('closed');
    const f = fixtures(b.ctx());
    const mine = await f.admin();
    const theirs = await f.admin();
    const p = profile('anything@elsewhere.example');
    await link(b, 'admin', mine.id, p);
    expect(await identities(b, 'admin', mine.id)).toEqual(['test']);
    expect((await refusal(link(b, 'admin', theirs.id, p))).type).toBe('conflict');
    expect((await refusal(link(b, 'admin', mine.id, profile('second@elsewhere.example')))).type).toBe('conflict');
    expect(await identities(b, 'admin', theirs.id)).toEqual([]);
    // Linking the same identity again is answered as linked, with nothing new.
    await link(b, 'admin', mine.id, p);
    expect(await identities(b, 'admin', mine.id)).toEqual(['test']);
  });
});

describe('unlinking: an admin keeps a way in', () => {
  it('with password sign-in off, the last linked provider stays (409) until another is linked', async () => {
    const b = bed('oauthOnly');
    const admin = await fixtures(b.ctx()).admin({ password: null });
    await link(b, 'admin', admin.id, profile(admin.email));
    expect((await refusal(unlinkIdentity(b.deps, 'admin', admin.id, 'test', meta))).type).toBe('conflict');
    await link(b, 'admin', admin.id, profile(admin.email), 'other');
    await unlinkIdentity(b.deps, 'admin', admin.id, 'test', meta);
    expect(await identities(b, 'admin', admin.id)).toEqual(['other']);
    expect((await refusal(unlinkIdentity(b.deps, 'admin', admin.id, 'other', meta))).type).toBe('conflict');
    expect((await refusal(unlinkIdentity(b.deps, 'admin', admin.id, 'test', meta))).type).toBe('not-found');
  });

  it('an admin with a password (and password sign-in on) may unlink the last provider; a client always may (the magic link stays)', async () => {
    const b = bed('closed');
    const admin = await fixtures(b.ctx()).admin();
    await link(b, 'admin', admin.id, profile(admin.email));
    await unlinkIdentity(b.deps, 'admin', admin.id, 'test', meta);
    expect(await identities(b, 'admin', admin.id)).toEqual([]);
    const client = await fixtures(b.ctx()).client();
    await link(b, 'client', client.id, profile(client.email));
    await unlinkIdentity(b.deps, 'client', client.id, 'test', meta);
    expect(await identities(b, 'client', client.id)).toEqual([]);
  });
});

describe('portal surface: sign-in and registration by mode', () => {
  it('closed: an unknown email is refused and makes nobody; a client an admin made links with a verified email, not an unverified one', async () => {
    const b = bed('closed');
    const before = await count(b, 'clients');
    expect(await signIn(b, 'client', profile('new-customer@example.com'))).toMatchObject({ refused: { reason: 'registration_closed' } });
    expect(await count(b, 'clients')).toBe(before);
    const client = await fixtures(b.ctx()).client();
    expect(await signIn(b, 'client', profile(client.email, false))).toMatchObject({ refused: { reason: 'email_not_verified' } });
    expect(await identities(b, 'client', client.id)).toEqual([]);
    expect(await signIn(b, 'client', profile(client.email))).toHaveProperty('pair');
    expect(await identities(b, 'client', client.id)).toEqual(['test']);
  });

  it('application: a verified email makes a pending client whose sign-in waits for approval', async () => {
    const b = bed('application');
    const outcome = await signIn(b, 'client', profile('applicant@example.com'));
    expect(outcome).toMatchObject({ refused: { reason: 'pending_approval' } });
    const row = await b.deps.db
      .selectFrom('clients')
      .select(['status', 'email_verified_at'])
      .where('email', '=', 'applicant@example.com')
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('pending');
    expect(row.email_verified_at).not.toBeNull();
  });

  it('open: a verified email makes an active client signed in at once; an unverified one registers nobody', async () => {
    const b = bed('open');
    expect(await signIn(b, 'client', profile('walk-in@example.com'))).toHaveProperty('pair');
    const row = await b.deps.db.selectFrom('clients').select('status').where('email', '=', 'walk-in@example.com').executeTakeFirstOrThrow();
    expect(row.status).toBe('active');
    const before = await count(b, 'clients');
    expect(await signIn(b, 'client', profile('unconfirmed@example.com', false))).toMatchObject({
      refused: { reason: 'email_not_verified' },
    });
    expect(await count(b, 'clients')).toBe(before);
  });

  it('a disabled client is refused even by a linked identity', async () => {
    const b = bed('open');
    const client = await fixtures(b.ctx()).client({ status: 'disabled' });
    expect(await signIn(b, 'client', profile(client.email))).toMatchObject({ refused: { status: 'forbidden' } });
  });
});
