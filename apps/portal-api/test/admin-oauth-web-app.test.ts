import { mountAdminApi } from '@svc/admin-api';
import { startTestServer, type TestServer } from '@svc/testkit';
import { type OidcTestProvider, startOidcTestProvider } from '@svc/testkit/oidc-test-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from './oauth-browser.ts';

// The admin panel's OAuth sign-in (issue 30.3) through real HTTP with a real OpenID provider:
// started with ?session=cookie, the callback ends at the panel (/admin/) signed in through the
// HttpOnly refresh cookie, with no token in any URL; a refusal ends there too, its words in the
// fragment. Without the parameter the callback answers as before (JSON token pair).
const BASE = 'https://panel.example.test';
const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };

let idp: OidcTestProvider;
let s: TestServer;

beforeAll(async () => {
  idp = await startOidcTestProvider({ redirectUris: [`${BASE}/api/v1/auth/oauth/test/callback`] });
  s = await startTestServer({
    env: {
      SVC_PUBLIC_BASE_URL: BASE,
      SVC_AUTH_OAUTH_TEST_CLIENT_ID: idp.clientId,
      SVC_AUTH_OAUTH_TEST_CLIENT_SECRET: idp.clientSecret,
      SVC_AUTH_OAUTH_TEST_ISSUER: idp.issuer,
    },
    config: { rate_limits: { oauth: { per_ip: { limit: 1000, window_seconds: 60 } } } },
    mount: mountAdminApi,
  });
  expect((await s.api.post('/api/v1/setup', { token: s.setupToken, ...OWNER })).status).toBe(201);
  idp.accounts.set('owner-sub', { email: OWNER.email, email_verified: true });
  idp.accounts.set('stranger-sub', { email: 'stranger@example.com', email_verified: true });
});
afterAll(async () => {
  await s?.stop();
  await idp?.close();
});

/** Browser `b` starts the panel's sign-in and signs `subject` in at the provider: the callback's answer. */
async function panelSignIn(b: Browser, subject: string): Promise<Response> {
  const start = await b.open(s.url, '/api/v1/auth/oauth/test/redirect?session=cookie');
  expect(start.status).toBe(302);
  const back = await idp.authorize(start.headers.get('location') as string, subject, BASE);
  return b.open(s.url, `${back.pathname}${back.search}`);
}

describe("the admin panel's OAuth sign-in (?session=cookie)", () => {
  it('ends at the panel signed in through the refresh cookie, with no token in the URL', async () => {
    const b = new Browser();
    const done = await panelSignIn(b, 'owner-sub');
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe('/admin/');
    expect(await done.text()).not.toMatch(/access_token|refresh_token/);
    const refresh = b.cookiesAt('/api/v1/auth/refresh').find((c) => c.name === '__Secure-svc_admin_refresh');
    expect(refresh?.attributes).toEqual(expect.arrayContaining(['HttpOnly', 'Secure', 'SameSite=Strict']));
    // What the panel does on load: one refresh through the cookie.
    const res = await fetch(`${s.url}/api/v1/auth/refresh?session=cookie`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: `__Secure-svc_admin_refresh=${refresh?.value}` },
      body: '{}',
    });
    expect(res.status).toBe(200);
    const me = await fetch(`${s.url}/api/v1/auth/me`, {
      headers: { authorization: `Bearer ${((await res.json()) as { access_token: string }).access_token}` },
    });
    expect(((await me.json()) as { email: string }).email).toBe(OWNER.email);
    // The binding and web-mode cookies are spent.
    expect(b.cookieFor('/api/v1/auth/oauth/test/callback')).toBe('');
  });

  it('a refused sign-in ends at the panel with the reason in the fragment, and no cookie', async () => {
    const b = new Browser();
    const done = await panelSignIn(b, 'stranger-sub');
    expect(done.status).toBe(302);
    const location = new URL(done.headers.get('location') as string, 'https://x');
    expect(location.pathname).toBe('/admin/');
    expect(decodeURIComponent(location.hash)).toMatch(/^#oauth_error=.+/);
    expect(b.cookiesAt('/api/v1/auth/refresh')).toEqual([]);
  });

  it('without ?session=cookie the callback answers the JSON token pair, as before', async () => {
    const b = new Browser();
    const start = await b.open(s.url, '/api/v1/auth/oauth/test/redirect');
    const back = await idp.authorize(start.headers.get('location') as string, 'owner-sub', BASE);
    const res = await b.get(s.api, `${back.pathname}${back.search}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.refresh_token).toEqual(expect.any(String));
  });
});
