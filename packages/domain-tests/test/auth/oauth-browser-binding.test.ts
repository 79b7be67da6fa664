import type { OAuthSurface } from '@svc/db';
import {
  browserMatches,
  completeOAuth,
  type DomainDeps,
  issueSession,
  linkFromSettings,
  type OAuthCallbackQuery,
  oauthBrowserCookie,
  revokeSession,
  sha256Hex,
  startOAuth,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { type OidcTestProvider, startOidcTestProvider } from '@svc/testkit/oidc-test-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';
import { withRateLimits } from './with-rate-limits.ts';

// Issue 29 items 3 and 7 at the verbs: startOAuth binds each request to the browser that
// started it (a value for its cookie, only the hash stored), completeOAuth refuses a callback
// without it, a link completes only in the session that asked, and a provider's error words
// stay in the log. A real OpenID provider (oidc-provider on 127.0.0.1) answers the exchange.
const BASE = 'https://cp.example.test';
const meta = { ip: '192.0.2.9' };
let idp: OidcTestProvider;
let bed: DomainTestbed;
/** The testbed's deps with room for the many starts below (rate_limits.oauth). */
let deps: DomainDeps;

beforeAll(async () => {
  idp = await startOidcTestProvider({ redirectUris: ['api/v1', 'portal/v1'].map((p) => `${BASE}/${p}/auth/oauth/test/callback`) });
  const provider = (surface: 'AUTH' | 'PORTAL') => ({
    [`SVC_${surface}_OAUTH_TEST_CLIENT_ID`]: idp.clientId,
    [`SVC_${surface}_OAUTH_TEST_CLIENT_SECRET`]: idp.clientSecret,
    [`SVC_${surface}_OAUTH_TEST_ISSUER`]: idp.issuer,
  });
  bed = await createDomainTestbed({
    env: { SVC_PUBLIC_BASE_URL: BASE, SVC_PORTAL_REGISTRATION: 'open', SVC_LOG_LEVEL: 'info', ...provider('AUTH'), ...provider('PORTAL') },
  });
  deps = withRateLimits(bed.deps, { oauth: { per_ip: { limit: 1000, window_seconds: 60 } } });
  idp.accounts.set('eve', { email: 'eve@example.com', email_verified: true });
  await fixtures(bed.ctx()).admin({ email: 'eve@example.com' });
});
afterAll(async () => {
  await bed?.close();
  await idp?.close();
});

/** Starts a request and walks the provider as `subject`: the callback's query and the starting browser's key. */
async function started(surface: OAuthSurface, subject: string, link: { subjectId: string; sessionId: string } | null = null) {
  const { url, browserKey } = await startOAuth(deps, surface, 'test', meta, link);
  const back = await idp.authorize(url.toString(), subject, BASE);
  const query = Object.fromEntries(back.searchParams) as OAuthCallbackQuery;
  return { query, browserKey };
}

const sessionCount = async () => (await bed.deps.db.selectFrom('sessions').select('id').execute()).length;

describe('an OAuth request is bound to the browser that started it', () => {
  for (const surface of ['admin', 'client'] as const) {
    it(`${surface}: completeOAuth refuses a callback without the starting browser's key (none, or another request's), signs nobody in and spends the request; with its key it signs in`, async () => {
      const mine = await started(surface, 'eve');
      for (const keys of [[], [(await started(surface, 'eve')).browserKey], ['not-a-key']]) {
        const theirs = await started(surface, 'eve');
        const before = await sessionCount();
        const err = await refusal(completeOAuth(deps, surface, 'test', theirs.query, meta, { keys }));
        expect([err.type, err.extra?.reason]).toEqual(['unauthenticated', 'browser_mismatch']);
        expect(await sessionCount()).toBe(before);
        const again = await refusal(completeOAuth(deps, surface, 'test', theirs.query, meta, { keys: [theirs.browserKey] }));
        expect(again.extra?.reason).toBe('state_invalid');
      }
      const ok = await completeOAuth(deps, surface, 'test', mine.query, meta, { keys: ['other', mine.browserKey] });
      expect(ok.kind).toBe('session');
    });
  }

  it('only the SHA-256 of the key is stored, and a request without a hash (started before binding existed) binds no browser', async () => {
    const { browserKey } = await started('client', 'eve');
    const rows = await bed.deps.db.selectFrom('oauth_requests').select('browser_hash').execute();
    expect(rows.some((r) => r.browser_hash === sha256Hex(browserKey))).toBe(true);
    expect(rows.some((r) => r.browser_hash === browserKey)).toBe(false);
    expect(browserMatches(sha256Hex(browserKey), [browserKey])).toBe(true);
    expect(browserMatches(null, [browserKey])).toBe(false);
    expect(browserMatches(sha256Hex(browserKey), [`${browserKey} `, browserKey.slice(1)])).toBe(false);
  });

  it('the cookie: Secure with the __Secure- prefix only for an https base, one name per surface, the path of that callback under the base path', () => {
    const at = (base: string) => ({ http: { public_base_url: base, port: 8080 } }) as never;
    expect(oauthBrowserCookie(at('https://cp.example.com/svc/'), 'admin', 'corp')).toEqual({
      name: '__Secure-svc_oauth_admin',
      path: '/svc/api/v1/auth/oauth/corp/callback',
      secure: true,
      maxAgeSeconds: 600,
    });
    expect(oauthBrowserCookie(at('http://localhost:8080'), 'client', 'github')).toEqual({
      name: 'svc_oauth_portal',
      path: '/portal/v1/auth/oauth/github/callback',
      secure: false,
      maxAgeSeconds: 600,
    });
  });
});

describe('a link completes only in the session that asked for it', () => {
  async function linker() {
    const client = await fixtures(bed.ctx()).client();
    const sid = async () => {
      const pair = await issueSession(bed.deps, bed.deps.db, { type: 'client', id: client.id }, 'magic_link', meta);
      return { pair, sid: (await bed.deps.tokens.verifyAccess(pair.access_token, 'client')).sid };
    };
    return { client, asking: await sid(), other: await sid() };
  }
  const linkedOf = (clientId: string) =>
    bed.deps.db.selectFrom('client_oauth_identities').selectAll().where('client_id', '=', clientId).execute();

  it("completeOAuth refuses a link completed with another session's token (403 link_session_mismatch); the asking session's token links", async () => {
    const { client, asking, other } = await linker();
    idp.accounts.set('link-1', { email: 'elsewhere@example.net', email_verified: false });
    const link = { subjectId: client.id, sessionId: asking.sid };
    const crossed = await started('client', 'link-1', link);
    const auth = (t: string) => ({ keys: [crossed.browserKey], authorization: `Bearer ${t}` });
    const err = await refusal(completeOAuth(deps, 'client', 'test', crossed.query, meta, auth(other.pair.access_token)));
    expect([err.type, err.extra?.reason]).toEqual(['forbidden', 'link_session_mismatch']);
    expect(await linkedOf(client.id)).toEqual([]);
    const same = await started('client', 'link-1', link);
    const ok = await completeOAuth(deps, 'client', 'test', same.query, meta, {
      keys: [same.browserKey],
      authorization: `Bearer ${asking.pair.access_token}`,
    });
    expect(ok).toMatchObject({ kind: 'linked', identity: { provider: 'test', email: 'elsewhere@example.net' } });
  });

  it('linkFromSettings refuses once the asking session is signed out, of another subject, or unknown (401 link_session_ended), and links while it is live', async () => {
    const { client, asking } = await linker();
    const stranger = await linker();
    const profile = { provider_user_id: `p-${client.id}`, email: null, email_verified: false };
    for (const sessionId of [stranger.asking.sid, null, 'ses_unknown']) {
      const err = await refusal(linkFromSettings(bed.deps, 'client', 'test', { subjectId: client.id, sessionId }, profile, meta));
      expect([err.type, err.extra?.reason]).toEqual(['unauthenticated', 'link_session_ended']);
    }
    expect(
      await linkFromSettings(bed.deps, 'client', 'test', { subjectId: client.id, sessionId: asking.sid }, profile, meta),
    ).toMatchObject({ provider: 'test' });
    await bed.deps.db.deleteFrom('client_oauth_identities').where('client_id', '=', client.id).execute();
    await revokeSession(bed.deps, { type: 'client', id: client.id }, asking.sid);
    const err = await refusal(linkFromSettings(bed.deps, 'client', 'test', { subjectId: client.id, sessionId: asking.sid }, profile, meta));
    expect(err.extra?.reason).toBe('link_session_ended');
    expect(await linkedOf(client.id)).toEqual([]);
  });
});

describe("a provider's error words stay in the log", () => {
  it('completeOAuth answers a fixed text by error code (other codes: a generic one), audits the code only, logs the words', async () => {
    const words = 'Your account is locked: call +1-555-0100 <a href="https://evil.example">now</a>';
    for (const [error, code] of [
      ['consent_required', 'consent_required'],
      ['totally\r\nmade up', 'other'],
    ] as const) {
      const { query, browserKey } = await started('client', 'eve');
      const q = { state: query.state, error, error_description: words };
      const err = await refusal(completeOAuth(deps, 'client', 'test', q, meta, { keys: [browserKey] }));
      expect(err.extra).toEqual({ reason: 'provider_refused', provider_error: code });
      expect(err.message).toBe(
        code === 'other'
          ? 'the OAuth provider test refused the sign-in'
          : 'the OAuth provider test refused the sign-in (consent_required): give your consent there first',
      );
      const audited = await bed.deps.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'auth.login_failed')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      expect(audited.details).toMatchObject({ reason: 'provider_refused', error: code });
      expect(JSON.stringify(audited.details)).not.toContain('555');
      expect(bed.logs.some((l) => l.error === error && l.error_description === words)).toBe(true);
    }
  });
});
