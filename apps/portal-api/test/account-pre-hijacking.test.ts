import { cookiesOf } from '@svc/testkit';
import { type OidcTestProvider, startOidcTestProvider } from '@svc/testkit/oidc-test-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';
import { captureMail, type MailCapture, settle } from './mail-capture.ts';

// Issue 29 item 1 through real HTTP (docs/portal.md, "A password only with a confirmed email"):
// a stranger registers the victim's email with a password of their choosing; the victim then
// signs in by a magic link, or by OAuth with a verified email; the stranger's password is
// refused afterwards, in both registration modes. The OAuth variant runs against a real
// OpenID provider on 127.0.0.1 (packages/testkit oidc-test-provider), driven like a browser.
const BASE = 'https://panel.example.test';
const STRANGER = { headers: { 'x-forwarded-for': '203.0.113.66' } };
const VICTIM = { headers: { 'x-forwarded-for': '198.51.100.20' } };
const STRANGERS_PASSWORD = 'the stranger chose this';

let idp: OidcTestProvider;
interface Env {
  p: PortalTestServer;
  mail: MailCapture;
}
const envs: Env[] = [];
async function env(registration: 'open' | 'application'): Promise<Env> {
  const p = await startPortal({
    SVC_SMTP_URL: 'smtp://127.0.0.1:1',
    SVC_PORTAL_REGISTRATION: registration,
    SVC_TRUST_PROXY: 'true',
    SVC_PUBLIC_BASE_URL: BASE,
    SVC_PORTAL_OAUTH_TEST_CLIENT_ID: idp.clientId,
    SVC_PORTAL_OAUTH_TEST_CLIENT_SECRET: idp.clientSecret,
    SVC_PORTAL_OAUTH_TEST_ISSUER: idp.issuer,
  });
  const e = { p, mail: await captureMail(p.s) };
  envs.push(e);
  return e;
}

let open: Env;
let application: Env;
beforeAll(async () => {
  idp = await startOidcTestProvider({ redirectUris: [`${BASE}/portal/v1/auth/oauth/test/callback`] });
  open = await env('open');
  application = await env('application');
}, 60_000);
afterAll(async () => {
  for (const e of envs) {
    await e.mail.stop();
    await e.p.stop();
  }
  await idp?.close();
});

const unique = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;

/** The stranger registers `email`; a second registration (the victim's) is 409. */
async function strangerRegisters({ p }: Env, email: string): Promise<string> {
  const reg = await p.s.api.post('/portal/v1/auth/register', { email, password: STRANGERS_PASSWORD }, STRANGER);
  expect(reg.status, reg.text).toBe(201);
  expect((await p.s.api.post('/portal/v1/auth/register', { email, password: 'the victim’s own password' }, VICTIM)).status).toBe(409);
  return reg.body.id;
}

const strangerSignsIn = ({ p }: Env, email: string) =>
  p.s.api.post('/portal/v1/auth/login', { email, password: STRANGERS_PASSWORD }, STRANGER);

/** The victim asks for a sign-in link and uses it (the registration's mail stays unread in their mailbox). */
async function victimUsesMagicLink({ p, mail }: Env, email: string) {
  await settle();
  await mail.tokenFor(email); // the stranger's registration mail: the victim ignores it
  expect((await p.s.api.post('/portal/v1/auth/magic-link', { email }, VICTIM)).status).toBe(202);
  return p.s.api.post('/portal/v1/auth/callback', { token: await mail.tokenFor(email) }, VICTIM);
}

/** The victim signs in with the provider (verified email), through the redirect and callback like a browser. */
async function victimUsesOAuth({ p }: Env, email: string) {
  const subject = `victim-${email}`;
  idp.accounts.set(subject, { email, email_verified: true });
  const start = await fetch(`${p.s.url}/portal/v1/auth/oauth/test/redirect`, { redirect: 'manual', headers: VICTIM.headers });
  expect(start.status).toBe(302);
  // Whatever cookie the redirect sets for this browser goes back with the callback.
  const cookie = start.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const back = await idp.authorize(start.headers.get('location') as string, subject, BASE);
  return p.s.api.get(`${back.pathname}${back.search}`, { headers: { ...VICTIM.headers, ...(cookie ? { cookie } : {}) } });
}

describe('account pre-hijacking: the stranger’s password is refused once the victim confirms the email another way', () => {
  it('open: the victim signs in by magic link; the stranger’s password is refused and the victim’s session stays', async () => {
    const email = unique('victim');
    const id = await strangerRegisters(open, email);
    // Before the confirmation the stranger cannot sign in either (spec 3.1 rule 1).
    expect((await strangerSignsIn(open, email)).status).toBe(403);
    const victim = await victimUsesMagicLink(open, email);
    expect(victim.status, victim.text).toBe(200);
    const refused = await strangerSignsIn(open, email);
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toBe('invalid email or password');
    const me = await open.p.s.api.get('/portal/v1/me', { token: victim.body.access_token });
    expect(me.body.client).toMatchObject({ id, email, has_password: false });
    expect(me.body.client.email_verified_at).not.toBeNull();
  });

  it('application: the magic link confirms, an admin approves; the stranger’s password is refused, the victim signs in by link', async () => {
    const email = unique('applicant-victim');
    const id = await strangerRegisters(application, email);
    const confirmed = await victimUsesMagicLink(application, email);
    expect(confirmed.status).toBe(403); // waits for approval, email confirmed
    const { p, mail } = application;
    expect((await p.s.api.post(`/api/v1/clients/${id}/approve`, undefined, { token: p.token })).status).toBe(200);
    expect((await strangerSignsIn(application, email)).status).toBe(401);
    expect((await p.s.api.post('/portal/v1/auth/magic-link', { email }, VICTIM)).status).toBe(202);
    expect((await p.s.api.post('/portal/v1/auth/callback', { token: await mail.tokenFor(email) }, VICTIM)).status).toBe(200);
  });

  it('open: the victim signs in with a provider that verifies the email; the stranger’s password is refused', async () => {
    const email = unique('oauth-victim');
    const id = await strangerRegisters(open, email);
    const victim = await victimUsesOAuth(open, email);
    expect(victim.status, victim.text).toBe(200);
    expect((await strangerSignsIn(open, email)).status).toBe(401);
    const row = await open.p.s.deps.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.email_verified_at).not.toBeNull();
    expect(row.password_hash).toBeNull();
    // The stranger's registration link, should the victim click it later, sets nothing either.
    await settle();
    const late = await open.p.s.api.post('/portal/v1/auth/callback', { token: await open.mail.tokenFor(email) }, VICTIM);
    expect(late.status).toBe(200);
    expect((await strangerSignsIn(open, email)).status).toBe(401);
  });

  it('the registrant’s own confirmation link, in the browser that registered, makes their password work (what a customer who registers expects)', async () => {
    const { p, mail } = open;
    const email = unique('registrant');
    const password = 'my own long password';
    const reg = await p.s.api.post('/portal/v1/auth/register', { email, password }, VICTIM);
    expect(reg.status).toBe(201);
    const cookie = cookiesOf(reg);
    expect(reg.headers.getSetCookie()[0]).toMatch(
      /^__Secure-svc_registration=[A-Za-z0-9_-]{43}; Max-Age=900; Path=\/portal\/v1\/auth\/callback; HttpOnly; Secure; SameSite=Lax$/,
    );
    await settle();
    const text = mail.mails.find((m) => m.to === email)?.text ?? '';
    expect(text).toContain('Open it in the browser you registered in');
    const confirmed = await p.s.api.post(
      '/portal/v1/auth/callback',
      { token: await mail.tokenFor(email) },
      { headers: { ...VICTIM.headers, cookie } },
    );
    expect(confirmed.status).toBe(200);
    expect(confirmed.headers.getSetCookie()[0]).toMatch(/^__Secure-svc_registration=; Max-Age=0;/);
    expect((await p.s.api.post('/portal/v1/auth/login', { email, password }, VICTIM)).status).toBe(200);
  });

  it('the victim clicks the stranger’s registration link in their own mailbox and browser: signed in without the stranger’s password, which stays refused', async () => {
    const { p, mail } = open;
    const email = unique('clicker');
    const id = await strangerRegisters(open, email);
    await settle();
    // The victim's browser never held the stranger's cookie (another registration's is no better).
    const other = await p.s.api.post('/portal/v1/auth/register', { email: unique('other'), password: 'another long password' }, VICTIM);
    const victim = await p.s.api.post(
      '/portal/v1/auth/callback',
      { token: await mail.tokenFor(email) },
      { headers: { ...VICTIM.headers, cookie: cookiesOf(other) } },
    );
    expect(victim.status, victim.text).toBe(200);
    expect((await strangerSignsIn(open, email)).status).toBe(401);
    const me = await p.s.api.get('/portal/v1/me', { token: victim.body.access_token });
    expect(me.body.client).toMatchObject({ id, email, has_password: false });
    // Signed in by the link moments ago, the victim chooses their own password.
    const set = await p.s.api.put(
      '/portal/v1/me/password',
      { password: 'the victim’s own password' },
      { token: victim.body.access_token, ...VICTIM },
    );
    expect(set.status, set.text).toBeLessThan(300);
    expect((await p.s.api.post('/portal/v1/auth/login', { email, password: 'the victim’s own password' }, VICTIM)).status).toBe(200);
  });
});
