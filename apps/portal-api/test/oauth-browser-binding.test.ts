import { mountAdminApi } from '@svc/admin-api';
import { sha256Hex } from '@svc/domain';
import { startTestServer, type TestServer } from '@svc/testkit';
import { type OidcTestProvider, startOidcTestProvider } from '@svc/testkit/oidc-test-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalApi } from '../src/index.ts';
import { Browser } from './oauth-browser.ts';

// Issue 29 items 3 and 7 through real HTTP with a real OpenID provider: an OAuth request is
// bound to the browser that started it (a cookie the callback requires; RFC 6749 10.12, RFC
// 9700 4.7), a link completes only in the session that asked for it, and a provider's
// error_description never reaches the answer. Each Browser is one cookie jar: `attacker` and
// `victim` are two browsers.
const BASE = 'https://panel.example.test';
const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };
const RETURN = 'https://app.example.test/signed-in';

let idp: OidcTestProvider;
const servers: TestServer[] = [];
type Surface = 'admin' | 'portal';
const prefix = (surface: Surface) => (surface === 'admin' ? '/api/v1' : '/portal/v1');
const account = (sub: string, email: string, verified = true) => idp.accounts.set(sub, { email, email_verified: verified });

async function start(env: Record<string, string> = {}): Promise<TestServer> {
  const provider = (surface: 'AUTH' | 'PORTAL') => ({
    [`SVC_${surface}_OAUTH_TEST_CLIENT_ID`]: idp.clientId,
    [`SVC_${surface}_OAUTH_TEST_CLIENT_SECRET`]: idp.clientSecret,
    [`SVC_${surface}_OAUTH_TEST_ISSUER`]: idp.issuer,
  });
  const s = await startTestServer({
    env: { SVC_PUBLIC_BASE_URL: BASE, SVC_PORTAL_REGISTRATION: 'open', ...provider('AUTH'), ...provider('PORTAL'), ...env },
    config: { rate_limits: { oauth: { per_ip: { limit: 1000, window_seconds: 60 } } } },
    mount: (root) => {
      const portal = createPortalApi();
      root.route('/', portal.routes);
      return [mountAdminApi(root), portal];
    },
  });
  servers.push(s);
  expect((await s.api.post('/api/v1/setup', { token: s.setupToken, ...OWNER })).status).toBe(201);
  return s;
}

/** Browser `b` opens the redirect route and signs `subject` in at the provider: the callback's path and query. */
async function callbackFor(s: TestServer, surface: Surface, b: Browser, subject: string): Promise<string> {
  const res = await b.open(s.url, `${prefix(surface)}/auth/oauth/test/redirect`);
  expect(res.status).toBe(302);
  const back = await idp.authorize(res.headers.get('location') as string, subject, BASE);
  return `${back.pathname}${back.search}`;
}

/** A session of `subject` on `surface`, signed in through OAuth in a browser of its own. */
async function signedIn(s: TestServer, surface: Surface, subject: string): Promise<string> {
  const b = new Browser();
  const res = await b.get(s.api, await callbackFor(s, surface, b, subject));
  expect(res.status, res.text).toBe(200);
  return res.body.access_token;
}

const sessions = (s: TestServer) => s.deps.db.selectFrom('sessions').select('id').execute();
const identities = (s: TestServer, surface: Surface) =>
  s.deps.db
    .selectFrom(surface === 'admin' ? 'admin_oauth_identities' : 'client_oauth_identities')
    .selectAll()
    .execute();

beforeAll(async () => {
  const uris = ['api/v1', 'portal/v1'].map((p) => `${BASE}/${p}/auth/oauth/test/callback`);
  idp = await startOidcTestProvider({ redirectUris: uris });
});
afterAll(async () => {
  for (const s of servers) await s.stop();
  await idp?.close();
});

describe('an OAuth request is bound to the browser that started it', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await start();
    account('owner-sub', OWNER.email);
    account('eve-sub', 'eve@example.com');
    account('victim-sub', 'victim@example.com');
  });

  it('the redirect sets a short-lived HttpOnly, Secure (https base), SameSite=Lax cookie on the callback path, one name per surface; only its hash is stored', async () => {
    for (const [surface, name] of [
      ['admin', '__Secure-svc_oauth_admin'],
      ['portal', '__Secure-svc_oauth_portal'],
    ] as const) {
      const b = new Browser();
      await b.open(s.url, `${prefix(surface)}/auth/oauth/test/redirect`);
      const [cookie, ...more] = b.cookiesAt(`${prefix(surface)}/auth/oauth/test/callback`);
      expect(more).toEqual([]);
      expect(cookie?.name).toBe(name);
      expect(cookie?.attributes.map((a) => a.toLowerCase()).sort()).toEqual([
        'httponly',
        'max-age=600',
        `path=${prefix(surface)}/auth/oauth/test/callback`,
        'samesite=lax',
        'secure',
      ]);
      const rows = await s.deps.db.selectFrom('oauth_requests').select(['browser_hash']).execute();
      expect(rows.some((r) => r.browser_hash === (cookie?.value ?? ''))).toBe(false);
      expect(rows.some((r) => r.browser_hash === sha256Hex(cookie?.value ?? ''))).toBe(true);
    }
  });

  for (const surface of ['admin', 'portal'] as const) {
    it(`${surface}: a sign-in callback from another browser (no cookie, or its own cookie) is refused, nobody is signed in, and the right browser still signs in`, async () => {
      const subject = surface === 'admin' ? 'owner-sub' : 'eve-sub';
      const withCookie = new Browser();
      await withCookie.open(s.url, `${prefix(surface)}/auth/oauth/test/redirect`); // the victim's own, unrelated start
      for (const victim of [new Browser(), withCookie]) {
        const attacker = new Browser();
        const planted = await callbackFor(s, surface, attacker, subject);
        const before = await sessions(s);
        const res = await victim.get(s.api, planted);
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ type: 'urn:svc:problem:unauthenticated', reason: 'browser_mismatch' });
        expect(res.text).not.toContain('access_token');
        expect(await sessions(s)).toHaveLength(before.length);
        // The refused callback cleared the victim's cookie and spent the request.
        expect(victim.cookieFor(planted)).toBe('');
        expect((await attacker.get(s.api, planted)).body.reason).toBe('state_invalid');
      }
      // A fresh sign-in in one browser works end to end.
      const b = new Browser();
      const callback = await callbackFor(s, surface, b, subject);
      expect(b.cookieFor(callback)).not.toBe('');
      const ok = await b.get(s.api, callback);
      expect(ok.status, ok.text).toBe(200);
      expect(b.cookieFor(callback)).toBe('');
      const failed = await s.deps.db.selectFrom('audit_log').select('details').where('action', '=', 'auth.login_failed').execute();
      expect(failed.some((r) => (r.details as any).reason === 'browser_mismatch')).toBe(true);
    });

    it(`${surface}: a link started by one account and completed in another browser is refused and nothing is linked (link CSRF)`, async () => {
      const token = surface === 'admin' ? await signedIn(s, 'admin', 'owner-sub') : await signedIn(s, 'portal', 'eve-sub');
      const attacker = new Browser();
      const link = await attacker.post(s.api, `${prefix(surface)}/auth/oauth/test/link`, undefined, { token });
      expect(link.status).toBe(200);
      const linkCookie = attacker.cookiesAt(`${prefix(surface)}/auth/oauth/test/callback`);
      expect(linkCookie.map((c) => c.attributes.map((a) => a.toLowerCase()).includes('httponly'))).toEqual([true]);
      account('victim-link-sub', `victim-${surface}@example.net`);
      const back = await idp.authorize(link.body.authorization_url, 'victim-link-sub', BASE);
      const before = await identities(s, surface);
      const victim = new Browser();
      const res = await victim.get(s.api, `${back.pathname}${back.search}`);
      expect(res.status).toBe(401);
      expect(res.body.reason).toBe('browser_mismatch');
      expect(await identities(s, surface)).toEqual(before);
    });

    it(`${surface}: a link completes only in the session that asked for it: another session's token is refused, a signed-out session is refused, the same session links`, async () => {
      const subject = surface === 'admin' ? 'owner-sub' : 'eve-sub';
      const asking = await signedIn(s, surface, subject);
      const other = await signedIn(s, surface, subject);
      const attempt = async (linkSub: string) => {
        const b = new Browser();
        const link = await b.post(s.api, `${prefix(surface)}/auth/oauth/test/link`, undefined, { token: asking });
        expect(link.status).toBe(200);
        const back = await idp.authorize(link.body.authorization_url, linkSub, BASE);
        return { b, callback: `${back.pathname}${back.search}` };
      };
      // First unlink what the sign-in made, so the link below has room for the provider.
      await s.api.delete(`${prefix(surface)}/auth/identities/test`, { token: asking });
      const before = await identities(s, surface);
      const crossed = await attempt(subject);
      const res = await crossed.b.get(s.api, crossed.callback, { token: other });
      expect(res.status).toBe(403);
      expect(res.body.reason).toBe('link_session_mismatch');
      expect(await identities(s, surface)).toEqual(before);

      const same = await attempt(subject);
      const linked = await same.b.get(s.api, same.callback, { token: asking });
      expect(linked.status, linked.text).toBe(200);
      expect(linked.body.linked.provider).toBe('test');
      expect((await s.api.delete(`${prefix(surface)}/auth/identities/test`, { token: asking })).status).toBe(204);

      const ended = await attempt(subject);
      expect((await s.api.post(`${prefix(surface)}/auth/logout`, undefined, { token: asking })).status).toBe(204);
      const gone = await ended.b.get(s.api, ended.callback);
      expect(gone.status).toBe(401);
      expect(gone.body.reason).toBe('link_session_ended');
      expect(await identities(s, surface)).toEqual(before);
    });
  }
});

describe("a provider's error_description is never echoed", () => {
  const WORDS = 'Call +1-555-0100 now <a href="https://evil.example">verify</a>';

  it('the problem says a fixed text by error code (the code only from a fixed list); the provider words reach only the log', async () => {
    const s = await start();
    for (const [error, code] of [
      ['access_denied', 'access_denied'],
      ['<b>made_up</b>', 'other'],
    ]) {
      const b = new Browser();
      const res = await b.open(s.url, '/portal/v1/auth/oauth/test/redirect');
      const state = new URL(res.headers.get('location') as string).searchParams.get('state') as string;
      const q = new URLSearchParams({ state, error: error as string, error_description: WORDS });
      const denied = await b.get(s.api, `/portal/v1/auth/oauth/test/callback?${q}`);
      expect(denied.status).toBe(401);
      expect(denied.body).toMatchObject({ reason: 'provider_refused', provider_error: code });
      expect(denied.text).not.toContain('555');
      expect(denied.text).not.toContain('evil');
      expect(denied.text).not.toContain('made_up');
      expect(denied.body.detail).toBe(
        code === 'other'
          ? 'the OAuth provider test refused the sign-in'
          : 'the OAuth provider test refused the sign-in (access_denied): it was declined there',
      );
      expect(s.logs.some((l) => l.error_description === WORDS && l.error === error)).toBe(true);
    }
  });

  it('nor in the return URL: the fragment carries the fixed text; a callback from another browser lands there as browser_mismatch without tokens', async () => {
    const s = await start({ SVC_PORTAL_OAUTH_RETURN_URL: RETURN });
    const b = new Browser();
    const res = await b.open(s.url, '/portal/v1/auth/oauth/test/redirect');
    const state = new URL(res.headers.get('location') as string).searchParams.get('state') as string;
    const q = new URLSearchParams({ state, error: 'access_denied', error_description: WORDS });
    const back = await b.open(s.url, `/portal/v1/auth/oauth/test/callback?${q}`);
    expect(back.status).toBe(302);
    const to = back.headers.get('location') as string;
    expect(to).not.toContain('555');
    expect(to).not.toContain('evil');
    expect(Object.fromEntries(new URLSearchParams(new URL(to).hash.slice(1)))).toEqual({
      error: 'unauthenticated',
      reason: 'provider_refused',
      error_description: 'the OAuth provider test refused the sign-in (access_denied): it was declined there',
    });

    account('eve-sub', 'eve@example.com');
    const planted = await callbackFor(s, 'portal', new Browser(), 'eve-sub');
    const elsewhere = await new Browser().open(s.url, planted);
    const fragment = Object.fromEntries(new URLSearchParams(new URL(elsewhere.headers.get('location') as string).hash.slice(1)));
    expect(fragment).toMatchObject({ error: 'unauthenticated', reason: 'browser_mismatch' });
    expect(fragment).not.toHaveProperty('access_token');
  });
});
