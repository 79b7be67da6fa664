import { createServer } from 'node:net';
import { mountAdminApi } from '@svc/admin-api';
import { startTestServer, type TestServer } from '@svc/testkit';
import { type OidcTestProvider, startOidcTestProvider } from '@svc/testkit/oidc-test-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalApi } from '../src/index.ts';
import { Browser } from './oauth-browser.ts';

// OAuth sign-in on both surfaces (spec 4.3, 4.6, 5.6, 5.9, 7.2) against a real OpenID
// provider (oidc-provider on 127.0.0.1, PKCE required), driven through its login and consent
// like a browser. The public base URL is a name only: the provider redirects there, and the
// test hands the callback's query to the server under test, from the browser (cookie jar) that
// started the sign-in (the callback requires its binding cookie; oauth-browser-binding.test.ts).
const BASE = 'https://panel.example.test';
const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };

const RELAXED = { rate_limits: { oauth: { per_ip: { limit: 1000, window_seconds: 60 } } } };
let idp: OidcTestProvider;
let downPort: number;
const servers: TestServer[] = [];

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** Admin and portal surfaces on one server; both have providers `test` and `other` (the same IdP) and `down`. */
async function start(env: Record<string, string> = {}, config: Record<string, unknown> = RELAXED): Promise<TestServer> {
  const provider = (surface: 'AUTH' | 'PORTAL', name: string, issuer: string) => ({
    [`SVC_${surface}_OAUTH_${name}_CLIENT_ID`]: idp.clientId,
    [`SVC_${surface}_OAUTH_${name}_CLIENT_SECRET`]: idp.clientSecret,
    [`SVC_${surface}_OAUTH_${name}_ISSUER`]: issuer,
  });
  const s = await startTestServer({
    env: {
      SVC_PUBLIC_BASE_URL: BASE,
      SVC_AUTH_PASSWORD_LOGIN: 'false',
      SVC_PORTAL_PASSWORD_LOGIN: 'false',
      ...provider('AUTH', 'TEST', idp.issuer),
      ...provider('AUTH', 'OTHER', idp.issuer),
      ...provider('AUTH', 'DOWN', `http://127.0.0.1:${downPort}`),
      ...provider('PORTAL', 'TEST', idp.issuer),
      ...provider('PORTAL', 'OTHER', idp.issuer),
      ...provider('PORTAL', 'DOWN', `http://127.0.0.1:${downPort}`),
      ...env,
    },
    config,
    mount: (root) => {
      const portal = createPortalApi();
      root.route('/', portal.routes);
      return [mountAdminApi(root), portal];
    },
  });
  servers.push(s);
  const setup = await s.api.post('/api/v1/setup', { token: s.setupToken, ...OWNER });
  expect(setup.status).toBe(201);
  return s;
}

const prefix = (surface: 'admin' | 'portal') => (surface === 'admin' ? '/api/v1' : '/portal/v1');

/** GET .../redirect without following, as browser `b` (it keeps the binding cookie): the provider URL. */
async function redirectTo(s: TestServer, surface: 'admin' | 'portal', provider = 'test', b = new Browser()): Promise<Response> {
  return b.open(s.url, `${prefix(surface)}/auth/oauth/${provider}/redirect`);
}

/** The provider's redirect back to the callback (after logging `subject` in), as a path+query on the server. */
async function authorizeAt(authorizationUrl: string, subject: string): Promise<string> {
  const back = await idp.authorize(authorizationUrl, subject, BASE);
  return `${back.pathname}${back.search}`;
}

async function signIn(s: TestServer, surface: 'admin' | 'portal', subject: string, provider = 'test') {
  const b = new Browser();
  const res = await redirectTo(s, surface, provider, b);
  expect(res.status).toBe(302);
  return b.get(s.api, await authorizeAt(res.headers.get('location') as string, subject));
}

const account = (sub: string, email: string | null, verified: boolean) => idp.accounts.set(sub, { email, email_verified: verified });

beforeAll(async () => {
  downPort = await closedPort();
  const uris = ['test', 'other'].flatMap((p) => [`${BASE}/api/v1/auth/oauth/${p}/callback`, `${BASE}/portal/v1/auth/oauth/${p}/callback`]);
  idp = await startOidcTestProvider({ redirectUris: uris });
});
afterAll(async () => {
  for (const s of servers) await s.stop();
  await idp?.close();
});

describe('admin surface (auth.oauth)', () => {
  let s: TestServer;
  let ownerToken: string;
  beforeAll(async () => {
    s = await start();
  });

  it('password_login=false with a provider is usable: the owner signs in by OAuth (verified email links automatically)', async () => {
    account('owner-sub', OWNER.email, true);
    const res = await signIn(s, 'admin', 'owner-sub');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 900,
      refresh_expires_in: expect.any(Number),
    });
    ownerToken = res.body.access_token;
    const me = await s.api.get('/api/v1/auth/me', { token: ownerToken });
    expect(me.body).toMatchObject({ email: OWNER.email, role: 'owner' });
    const linked = await s.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'auth.oauth_linked').execute();
    expect(linked.map((r) => (r.details as any).how)).toEqual(['automatic']);
  });

  it('redirect: 302 to the provider with state, PKCE S256 challenge and nonce; only the state hash is stored', async () => {
    const res = await redirectTo(s, 'admin');
    const url = new URL(res.headers.get('location') as string);
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe(`${BASE}/api/v1/auth/oauth/test/callback`);
    const state = url.searchParams.get('state') as string;
    expect(Buffer.from(state, 'base64url')).toHaveLength(32);
    expect(url.searchParams.get('nonce')).toBeTruthy();
    const rows = await s.deps.db.selectFrom('oauth_requests').selectAll().execute();
    expect(rows.some((r) => r.state_hash === state)).toBe(false);
    expect(rows.every((r) => r.surface === 'admin' && r.expires_at.getTime() - r.created_at.getTime() === 600_000)).toBe(true);
  });

  it('an existing identity signs in by (provider, provider user id), even after the email changed at the provider', async () => {
    account('owner-sub', 'renamed@elsewhere.example', false);
    const res = await signIn(s, 'admin', 'owner-sub');
    expect(res.status, res.text).toBe(200);
    expect((await s.api.get('/api/v1/auth/me', { token: res.body.access_token })).body.email).toBe(OWNER.email);
    account('owner-sub', OWNER.email, true);
  });

  it('unverified provider email for an existing admin: refused, nothing linked, audited with the reason', async () => {
    const created = await s.api.post('/api/v1/admins', { email: 'ops@example.com', role: 'admin' }, { token: ownerToken });
    expect(created.status).toBe(201);
    account('ops-sub', 'OPS@example.com', false);
    const res = await signIn(s, 'admin', 'ops-sub');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ type: 'urn:svc:problem:forbidden', reason: 'email_not_verified' });
    expect(res.body.detail).toMatch(/does not confirm/);
    const ids = await s.deps.db.selectFrom('admin_oauth_identities').select('admin_id').where('admin_id', '=', created.body.id).execute();
    expect(ids).toEqual([]);
    const failed = await s.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'auth.login_failed').execute();
    expect(failed.some((r) => (r.details as any).reason === 'email_not_verified' && r.entity_id === created.body.id)).toBe(true);
  });

  it('admin self-registration is closed: an unknown email is refused and no admin is created', async () => {
    const before = await s.deps.db.selectFrom('admins').select('id').execute();
    account('stranger-sub', 'stranger@example.com', true);
    const res = await signIn(s, 'admin', 'stranger-sub');
    expect(res.status).toBe(403);
    expect(res.body.reason).toBe('no_account');
    expect(await s.deps.db.selectFrom('admins').select('id').execute()).toHaveLength(before.length);
  });

  it('state reused, unknown, or from the other surface: refused', async () => {
    const b = new Browser();
    const start = await redirectTo(s, 'admin', 'test', b);
    const callback = await authorizeAt(start.headers.get('location') as string, 'owner-sub');
    expect((await b.get(s.api, callback)).status).toBe(200);
    const again = await b.get(s.api, callback);
    expect(again.status).toBe(401);
    expect(again.body.reason).toBe('state_invalid');
    const unknown = await s.api.get(`/api/v1/auth/oauth/test/callback?code=abc&state=${'x'.repeat(43)}`);
    expect(unknown.status).toBe(401);
    const portalStart = await redirectTo(s, 'portal', 'test', b);
    const portalCallback = await authorizeAt(portalStart.headers.get('location') as string, 'owner-sub');
    const crossed = await b.get(s.api, portalCallback.replace('/portal/v1/', '/api/v1/'));
    expect(crossed.status).toBe(401);
    expect(crossed.body.reason).toBe('state_invalid');
  });

  it('the PKCE verifier is what the provider checks: a wrong stored verifier makes the exchange fail', async () => {
    const b = new Browser();
    const start = await redirectTo(s, 'admin', 'test', b);
    const callback = await authorizeAt(start.headers.get('location') as string, 'owner-sub');
    await s.deps.db
      .updateTable('oauth_requests')
      .set({ code_verifier: 'w'.repeat(43) })
      .where('used_at', 'is', null)
      .execute();
    const res = await b.get(s.api, callback);
    expect(res.status).toBe(401);
    expect(res.body.reason).toBe('provider_refused');
    expect(res.body.detail).toMatch(/invalid_grant/);
  });

  it('the session issued refreshes through /auth/refresh, and presenting the used token again revokes', async () => {
    const pair = (await signIn(s, 'admin', 'owner-sub')).body;
    const next = await s.api.post('/api/v1/auth/refresh', { refresh_token: pair.refresh_token });
    expect(next.status).toBe(200);
    expect((await s.api.post('/api/v1/auth/refresh', { refresh_token: pair.refresh_token })).status).toBe(401);
    expect((await s.api.post('/api/v1/auth/refresh', { refresh_token: next.body.refresh_token })).status).toBe(401);
    const session = await s.deps.db.selectFrom('sessions').select(['method']).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(session.method).toBe('oauth:test');
  });

  it('linking from settings needs no email match; identities are listed and unlinked; the last way in stays', async () => {
    const token = (await signIn(s, 'admin', 'owner-sub')).body.access_token;
    account('owner-other-sub', 'someone-else@example.com', false);
    const b = new Browser();
    const link = await b.post(s.api, '/api/v1/auth/oauth/other/link', undefined, { token });
    expect(link.status).toBe(200);
    const linked = await b.get(s.api, await authorizeAt(link.body.authorization_url, 'owner-other-sub'));
    expect(linked.status, linked.text).toBe(200);
    expect(linked.body.linked).toMatchObject({ provider: 'other', email: 'someone-else@example.com' });
    const viaOther = await signIn(s, 'admin', 'owner-other-sub', 'other');
    expect((await s.api.get('/api/v1/auth/me', { token: viaOther.body.access_token })).body.email).toBe(OWNER.email);
    const list = await s.api.get('/api/v1/auth/identities', { token });
    expect(list.body.items.map((i: any) => i.provider)).toEqual(['other', 'test']);
    expect((await s.api.delete('/api/v1/auth/identities/other', { token })).status).toBe(204);
    const last = await s.api.delete('/api/v1/auth/identities/test', { token });
    expect(last.status).toBe(409);
    expect((await s.api.delete('/api/v1/auth/identities/other', { token })).status).toBe(404);
  });

  it('linking an identity that belongs to another admin: 409', async () => {
    const token = (await signIn(s, 'admin', 'owner-sub')).body.access_token;
    expect((await s.api.post('/api/v1/admins', { email: 'second@example.com', role: 'viewer' }, { token })).status).toBe(201);
    account('second-sub', 'second@example.com', true);
    const secondToken = (await signIn(s, 'admin', 'second-sub')).body.access_token;
    // The second admin (a viewer: any role links) tries to link the owner's identity.
    const b = new Browser();
    const theirs = await b.post(s.api, '/api/v1/auth/oauth/test/link', undefined, { token: secondToken });
    expect(theirs.status).toBe(200);
    const res = await b.get(s.api, await authorizeAt(theirs.body.authorization_url, 'owner-sub'));
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/another administrator/);
  });

  it('an unconfigured provider: every route of it is 404, before authentication', async () => {
    expect((await redirectTo(s, 'admin', 'nope')).status).toBe(404);
    expect((await s.api.get('/api/v1/auth/oauth/nope/callback?code=a&state=b')).status).toBe(404);
    expect((await s.api.post('/api/v1/auth/oauth/nope/link')).status).toBe(404);
    expect((await s.api.get('/api/v1/auth/methods')).body.oauth).toEqual(['down', 'other', 'test']);
  });

  it('a provider that is down: 503 problem, not 500, and nothing stored', async () => {
    const before = await s.deps.db.selectFrom('oauth_requests').select('state_hash').execute();
    const res = await redirectTo(s, 'admin', 'down');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(((await res.json()) as { detail: string }).detail).toMatch(/cannot be reached/);
    expect(await s.deps.db.selectFrom('oauth_requests').select('state_hash').execute()).toHaveLength(before.length);
  });
});

describe('the return URL (auth.oauth_return_url / portal_auth.oauth_return_url)', () => {
  it('redirects to the front end with the token pair, or the error, in the URL fragment', async () => {
    const s = await start({ SVC_AUTH_OAUTH_RETURN_URL: 'https://app.example.test/signed-in' });
    account('owner-sub', OWNER.email, true);
    const b = new Browser();
    const start1 = await redirectTo(s, 'admin', 'test', b);
    const callback = await authorizeAt(start1.headers.get('location') as string, 'owner-sub');
    const ok = await b.open(s.url, callback);
    expect(ok.status).toBe(302);
    const to = new URL(ok.headers.get('location') as string);
    expect(to.origin + to.pathname).toBe('https://app.example.test/signed-in');
    expect(to.search).toBe('');
    const pair = Object.fromEntries(new URLSearchParams(to.hash.slice(1)));
    expect(pair).toMatchObject({ token_type: 'Bearer', expires_in: '900' });
    expect((await s.api.get('/api/v1/auth/me', { token: pair.access_token })).body.email).toBe(OWNER.email);
    const reused = await b.open(s.url, callback);
    const error = Object.fromEntries(new URLSearchParams(new URL(reused.headers.get('location') as string).hash.slice(1)));
    expect(error).toMatchObject({ error: 'unauthenticated', reason: 'state_invalid' });
  });
});

describe('hostile callbacks', () => {
  it('oversized, missing or provider-error parameters are 400/401 problems, never 5xx', async () => {
    const s = await start();
    expect((await s.api.get(`/api/v1/auth/oauth/test/callback?code=a&state=${'s'.repeat(5000)}`)).status).toBe(400);
    expect((await s.api.get(`/api/v1/auth/oauth/test/callback?code=${'c'.repeat(5000)}&state=s`)).status).toBe(400);
    expect((await s.api.get('/api/v1/auth/oauth/test/callback?code=a')).status).toBe(400);
    const b = new Browser();
    const start1 = await redirectTo(s, 'admin', 'test', b);
    const state = new URL(start1.headers.get('location') as string).searchParams.get('state') as string;
    const denied = await b.get(s.api, `/api/v1/auth/oauth/test/callback?error=access_denied&state=${state}`);
    expect(denied.status).toBe(401);
    expect(denied.body).toMatchObject({ reason: 'provider_refused' });
    expect(denied.body.detail).toMatch(/access_denied/);
  });
});

describe('abuse control', () => {
  it('the redirect and the callback are rate limited per address (rate_limits.oauth.per_ip)', async () => {
    const s = await start({}, { rate_limits: { oauth: { per_ip: { limit: 2, window_seconds: 60 } } } });
    expect((await redirectTo(s, 'admin')).status).toBe(302);
    expect((await redirectTo(s, 'portal')).status).toBe(302);
    expect((await redirectTo(s, 'admin')).status).toBe(429);
    expect((await s.api.get('/api/v1/auth/oauth/test/callback?code=a&state=b')).status).toBe(429);
  });
});

describe('portal surface (portal_auth.oauth, registration by mode)', () => {
  it('closed: an unknown email is refused; a client an admin made links with a verified email; unverified: refused, nothing linked', async () => {
    const s = await start();
    const owner = (await signInOwner(s)).access_token;
    account('new-sub', 'new@example.com', true);
    const closed = await signIn(s, 'portal', 'new-sub');
    expect(closed.status).toBe(403);
    expect(closed.body.reason).toBe('registration_closed');
    expect(await s.deps.db.selectFrom('clients').select('id').execute()).toEqual([]);

    const client = await s.api.post('/api/v1/clients', { email: 'carol@example.com' }, { token: owner });
    expect(client.status).toBe(201);
    account('carol-unverified', 'carol@example.com', false);
    const refused = await signIn(s, 'portal', 'carol-unverified');
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe('email_not_verified');
    expect(await s.deps.db.selectFrom('client_oauth_identities').selectAll().execute()).toEqual([]);

    account('carol-sub', 'carol@example.com', true);
    const ok = await signIn(s, 'portal', 'carol-sub');
    expect(ok.status, ok.text).toBe(200);
    const ids = await s.api.get('/portal/v1/auth/identities', { token: ok.body.access_token });
    expect(ids.status).toBe(200);
    expect(ids.body.items).toMatchObject([{ provider: 'test', email: 'carol@example.com' }]);
    // An admin token is refused on the portal, and the other way round.
    expect((await s.api.get('/portal/v1/auth/identities', { token: owner })).status).toBe(401);
    expect((await s.api.get('/api/v1/auth/identities', { token: ok.body.access_token })).status).toBe(401);
    // The portal session rotates through the portal's /auth/refresh; reuse revokes.
    const next = await s.api.post('/portal/v1/auth/refresh', { refresh_token: ok.body.refresh_token });
    expect(next.status).toBe(200);
    expect((await s.api.post('/portal/v1/auth/refresh', { refresh_token: ok.body.refresh_token })).status).toBe(401);
    expect((await s.api.post('/portal/v1/auth/refresh', { refresh_token: next.body.refresh_token })).status).toBe(401);

    // Linking from settings on the portal (no email match needed), then unlinking: a client keeps the magic link.
    const token = (await signIn(s, 'portal', 'carol-sub')).body.access_token;
    account('carol-other', 'carol.private@example.net', false);
    const b = new Browser();
    const link = await b.post(s.api, '/portal/v1/auth/oauth/other/link', undefined, { token });
    expect(link.status).toBe(200);
    const linked = await b.get(s.api, await authorizeAt(link.body.authorization_url, 'carol-other'));
    expect(linked.status, linked.text).toBe(200);
    expect(linked.body.linked).toMatchObject({ provider: 'other', email: 'carol.private@example.net' });
    expect((await signIn(s, 'portal', 'carol-other', 'other')).status).toBe(200);
    expect((await s.api.delete('/portal/v1/auth/identities/test', { token })).status).toBe(204);
    expect((await s.api.delete('/portal/v1/auth/identities/other', { token })).status).toBe(204);
    expect((await s.api.get('/portal/v1/auth/identities', { token })).body.items).toEqual([]);
  });

  it('application: a pending client, the client.registered event, and sign-in refused until approved', async () => {
    const s = await start({ SVC_PORTAL_REGISTRATION: 'application' });
    account('dave-sub', 'dave@example.com', true);
    const res = await signIn(s, 'portal', 'dave-sub');
    expect(res.status).toBe(403);
    expect(res.body.reason).toBe('pending_approval');
    const client = await s.deps.db.selectFrom('clients').selectAll().where('email', '=', 'dave@example.com').executeTakeFirstOrThrow();
    expect(client.status).toBe('pending');
    const events = await s.deps.db.selectFrom('events').selectAll().where('type', '=', 'client.registered').execute();
    expect(events.map((e) => e.payload)).toEqual([
      { client_id: client.id, email: 'dave@example.com', status: 'pending', method: 'oauth:test', registration_mode: 'application' },
    ]);
    expect((await signIn(s, 'portal', 'dave-sub')).body.reason).toBe('pending_approval');
    const owner = (await signInOwner(s)).access_token;
    expect((await s.api.post(`/api/v1/clients/${client.id}/approve`, undefined, { token: owner })).status).toBe(200);
    expect((await signIn(s, 'portal', 'dave-sub')).status).toBe(200);
  });

  it('open: a verified email makes an active client signed in at once, and client.registered (mode open) tells the owners; an unverified one is refused', async () => {
    const s = await start({ SVC_PORTAL_REGISTRATION: 'open' });
    account('erin-sub', 'erin@example.com', true);
    const res = await signIn(s, 'portal', 'erin-sub');
    expect(res.status, res.text).toBe(200);
    const client = await s.deps.db.selectFrom('clients').selectAll().where('email', '=', 'erin@example.com').executeTakeFirstOrThrow();
    expect(client.status).toBe('active');
    expect(client.email_verified_at).not.toBeNull();
    const events = await s.deps.db.selectFrom('events').selectAll().where('type', '=', 'client.registered').execute();
    expect(events.map((e) => e.payload)).toEqual([
      { client_id: client.id, email: 'erin@example.com', status: 'active', method: 'oauth:test', registration_mode: 'open' },
    ]);
    account('frank-sub', 'frank@example.com', false);
    const refused = await signIn(s, 'portal', 'frank-sub');
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe('email_not_verified');
    expect(await s.deps.db.selectFrom('clients').select('id').where('email', '=', 'frank@example.com').execute()).toEqual([]);
  });
});

async function signInOwner(s: TestServer) {
  account('owner-sub', OWNER.email, true);
  const res = await signIn(s, 'admin', 'owner-sub');
  expect(res.status, res.text).toBe(200);
  return res.body as { access_token: string };
}
