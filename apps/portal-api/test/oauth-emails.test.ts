import { mountAdminApi } from '@svc/admin-api';
import { startTestServer, type TestServer } from '@svc/testkit';
import { MALFORMED_EMAILS } from '@svc/testkit/hostile-text';
import { type OidcTestProvider, startOidcTestProvider } from '@svc/testkit/oidc-test-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalApi } from '../src/index.ts';
import { Browser } from './oauth-browser.ts';

// Issue 29 item 5 through real HTTP with a real OpenID provider: a provider's email passes the
// one Email rule of every surface (one ASCII address, checked before lower-casing), and one
// that fails counts as no email: never a client's email, never a link by lookalike.
const BASE = 'https://panel.example.test';
const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };

const MALFORMED = MALFORMED_EMAILS;

let idp: OidcTestProvider;
let s: TestServer;
let ownerToken: string;
const account = (sub: string, email: string, verified = true) => idp.accounts.set(sub, { email, email_verified: verified });

async function viaOAuth(surface: 'admin' | 'portal', subject: string, opts: { link?: string } = {}) {
  const base = surface === 'admin' ? '/api/v1' : '/portal/v1';
  const b = new Browser();
  let url: string;
  if (opts.link) {
    const link = await b.post(s.api, `${base}/auth/oauth/test/link`, undefined, { token: opts.link });
    expect(link.status).toBe(200);
    url = link.body.authorization_url;
  } else {
    url = (await b.open(s.url, `${base}/auth/oauth/test/redirect`)).headers.get('location') as string;
  }
  const back = await idp.authorize(url, subject, BASE);
  return b.get(s.api, `${back.pathname}${back.search}`);
}

beforeAll(async () => {
  idp = await startOidcTestProvider({ redirectUris: ['api/v1', 'portal/v1'].map((p) => `${BASE}/${p}/auth/oauth/test/callback`) });
  const provider = (surface: 'AUTH' | 'PORTAL') => ({
    [`SVC_${surface}_OAUTH_TEST_CLIENT_ID`]: idp.clientId,
    [`SVC_${surface}_OAUTH_TEST_CLIENT_SECRET`]: idp.clientSecret,
    [`SVC_${surface}_OAUTH_TEST_ISSUER`]: idp.issuer,
  });
  s = await startTestServer({
    env: { SVC_PUBLIC_BASE_URL: BASE, SVC_PORTAL_REGISTRATION: 'open', ...provider('AUTH'), ...provider('PORTAL') },
    config: { rate_limits: { oauth: { per_ip: { limit: 1000, window_seconds: 60 } } } },
    mount: (root) => {
      const portal = createPortalApi();
      root.route('/', portal.routes);
      return [mountAdminApi(root), portal];
    },
  });
  expect((await s.api.post('/api/v1/setup', { token: s.setupToken, ...OWNER })).status).toBe(201);
  ownerToken = (await s.api.post('/api/v1/auth/login', OWNER)).body.access_token;
});
afterAll(async () => {
  await s?.stop();
  await idp?.close();
});

describe('OAuth profile emails pass the one Email rule; a malformed one counts as no email', () => {
  it('portal, registration open: every malformed verified email is refused as no_email, and no client or identity is stored', async () => {
    const clients = await s.deps.db.selectFrom('clients').select('email').execute();
    let n = 0;
    for (const email of MALFORMED) {
      account(`mallory-${++n}`, email);
      const res = await viaOAuth('portal', `mallory-${n}`);
      expect(res.status, email).toBe(403);
      expect(res.body.reason, email).toBe('no_email');
      expect(res.text).not.toContain('bcc');
      expect(res.text).not.toContain('<');
    }
    expect(await s.deps.db.selectFrom('clients').select('email').execute()).toEqual(clients);
    expect(await s.deps.db.selectFrom('client_oauth_identities').selectAll().execute()).toEqual([]);
    const audited = await s.deps.db.selectFrom('audit_log').select('details').where('action', '=', 'auth.login_failed').execute();
    expect(audited.filter((r) => (r.details as any).reason === 'no_email').map((r) => (r.details as any).email)).toEqual(
      MALFORMED.map(() => null),
    );
  });

  it("the Kelvin sign never lands on another customer's or admin's address: no automatic link, the record untouched", async () => {
    const karol = await s.api.post('/api/v1/clients', { email: 'karol@example.com' }, { token: ownerToken });
    expect(karol.status).toBe(201);
    expect((await s.api.post('/api/v1/admins', { email: 'kate@example.com', role: 'admin' }, { token: ownerToken })).status).toBe(201);
    const karolBefore = await s.deps.db.selectFrom('clients').selectAll().where('id', '=', karol.body.id).executeTakeFirstOrThrow();
    account('kelvin-client', '\u212Aarol@example.com');
    account('kelvin-admin', '\u212Aate@example.com');
    const portal = await viaOAuth('portal', 'kelvin-client');
    expect([portal.status, portal.body.reason]).toEqual([403, 'no_email']);
    const admin = await viaOAuth('admin', 'kelvin-admin');
    expect([admin.status, admin.body.reason]).toEqual([403, 'no_email']);
    expect(await s.deps.db.selectFrom('client_oauth_identities').selectAll().execute()).toEqual([]);
    expect(await s.deps.db.selectFrom('admin_oauth_identities').selectAll().execute()).toEqual([]);
    expect(await s.deps.db.selectFrom('clients').selectAll().where('id', '=', karol.body.id).executeTakeFirstOrThrow()).toEqual(
      karolBefore,
    );
  });

  it('linking from settings keeps the identity but not a malformed email (stored as none)', async () => {
    account('link-mallory', 'mallory@example.com\r\nbcc: everyone@example.com');
    const res = await viaOAuth('admin', 'link-mallory', { link: ownerToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.linked).toMatchObject({ provider: 'test', email: null });
    const rows = await s.deps.db.selectFrom('admin_oauth_identities').select('email').execute();
    expect(rows).toEqual([{ email: null }]);
  });

  it('a well-formed email in capitals registers lower-cased (the rule still takes real addresses)', async () => {
    account('erin-sub', '  Erin.O+vpn@Example.COM ');
    const res = await viaOAuth('portal', 'erin-sub');
    expect(res.status, res.text).toBe(200);
    const rows = await s.deps.db.selectFrom('clients').select('email').where('email', 'like', 'erin%').execute();
    expect(rows).toEqual([{ email: 'erin.o+vpn@example.com' }]);
  });
});

describe('the same Email rule on the other surfaces', () => {
  it('registration, magic link and the admin API refuse the Kelvin sign and the header-injection forms (400), and store nothing', async () => {
    const before = await s.deps.db.selectFrom('clients').select('email').execute();
    for (const email of ['\u212Aarol@example.com', 'a@example.com\r\nbcc: b@example.com', 'a@example.com, b@example.com']) {
      const register = await s.api.post('/portal/v1/auth/register', { email, password: 'a long customer password' });
      expect([register.status, register.body.errors?.email], email).toEqual([400, 'must be an email address']);
      expect((await s.api.post('/portal/v1/auth/magic-link', { email })).status, email).toBe(400);
      expect((await s.api.post('/api/v1/clients', { email }, { token: ownerToken })).status, email).toBe(400);
      expect((await s.api.post('/api/v1/admins', { email, role: 'viewer' }, { token: ownerToken })).status, email).toBe(400);
    }
    expect(await s.deps.db.selectFrom('clients').select('email').execute()).toEqual(before);
  });
});
