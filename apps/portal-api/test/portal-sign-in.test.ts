import { cookiesOf, login, OWNER } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';
import { captureMail, type MailCapture, settle } from './mail-capture.ts';

/**
 * The portal's sign-in and registration (spec 3.1, 3.3, 4.6, 5.7, 5.8, 7.2) through real HTTP,
 * one server per registration mode. Mails are read from the worker's queue (mail-capture.ts).
 */
const PASSWORD = 'a long customer password';

interface Env {
  p: PortalTestServer;
  mail: MailCapture;
}
async function env(vars: Record<string, string>): Promise<Env> {
  // Every request of these tests comes from 127.0.0.1: its address budget is not what they test.
  const p = await startPortal(
    { SVC_SMTP_URL: 'smtp://127.0.0.1:1', ...vars },
    { rate_limits: { magic_link: { per_ip: { limit: 1000, window_seconds: 60 } } } },
  );
  return { p, mail: await captureMail(p.s) };
}
const stopAll = async (...es: Array<Env | undefined>) => {
  for (const e of es) {
    await e?.mail.stop();
    await e?.p.stop();
  }
};

let closed: Env;
let application: Env;
let open: Env;

beforeAll(async () => {
  closed = await env({});
  application = await env({ SVC_PORTAL_REGISTRATION: 'application', SVC_TRUST_PROXY: 'true' });
  open = await env({ SVC_PORTAL_REGISTRATION: 'open' });
}, 60_000);
afterAll(() => stopAll(closed, application, open));

const unique = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;

describe('GET /portal/v1/auth/methods (spec 5.9 rule 2)', () => {
  it('answers without a token: magic link always, password, OAuth providers, and the registration mode', async () => {
    const res = await application.p.s.api.get('/portal/v1/auth/methods');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ magic_link: true, password: true, oauth: [], registration: 'application' });
    expect((await closed.p.s.api.get('/portal/v1/auth/methods')).body.registration).toBe('closed');
  });
});

describe('registration mode (spec 5.8, 7.2)', () => {
  it('closed: POST /portal/v1/auth/register is 404 and creates nothing', async () => {
    const email = unique('closed');
    const res = await closed.p.s.api.post('/portal/v1/auth/register', { email, password: PASSWORD });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(await closed.p.s.deps.db.selectFrom('clients').select('id').where('email', '=', email).executeTakeFirst()).toBeUndefined();
  });

  it('application: pending + client.registered; the link confirms the email but sign-in waits for approval; then every method works', async () => {
    const { p, mail } = application;
    const email = unique('applicant');
    const reg = await p.s.api.post('/portal/v1/auth/register', { email, password: PASSWORD });
    expect(reg.status, reg.text).toBe(201);
    expect(reg.body).toMatchObject({ email, status: 'pending', email_verified: false });
    const event = await p.s.deps.db
      .selectFrom('events')
      .selectAll()
      .where('type', '=', 'client.registered')
      .orderBy('id', 'desc')
      .executeTakeFirst();
    expect(event?.payload).toMatchObject({
      client_id: reg.body.id,
      email,
      status: 'pending',
      method: 'password',
      registration_mode: 'application',
    });
    await settle();
    expect(mail.mails.filter((m) => m.to === email).map((m) => m.category)).toEqual(['registration_confirmation']);

    // Right password, unconfirmed and pending: refused (403), after the password check.
    const early = await p.s.api.post('/portal/v1/auth/login', { email, password: PASSWORD });
    expect(early.status).toBe(403);
    expect(early.body.detail).toContain('approval');

    // The link confirms the email (first use), but a pending client may not sign in.
    const token = await mail.tokenFor(email);
    // In the browser that registered (its cookie): the password chosen at registration becomes the client's.
    const confirmed = await p.s.api.post('/portal/v1/auth/callback', { token }, { headers: { cookie: cookiesOf(reg) } });
    expect(confirmed.status).toBe(403);
    expect(confirmed.body.detail).toContain('approval');
    const row = await p.s.deps.db.selectFrom('clients').selectAll().where('id', '=', reg.body.id).executeTakeFirstOrThrow();
    expect(row.email_verified_at).not.toBeNull();
    expect(row.status).toBe('pending');
    // Used once: the same link again is refused, even after approval.
    const approved = await p.s.api.post(`/api/v1/clients/${reg.body.id}/approve`, undefined, { token: p.token });
    expect(approved.status).toBe(200);
    expect((await p.s.api.post('/portal/v1/auth/callback', { token })).status).toBe(401);

    const signedIn = await p.s.api.post('/portal/v1/auth/login', { email, password: PASSWORD });
    expect(signedIn.status, signedIn.text).toBe(200);
    expect(signedIn.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String), refresh_token: expect.any(String) });
    const me = await p.s.api.get('/portal/v1/me', { token: signedIn.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.client).toMatchObject({ id: reg.body.id, email, status: 'active' });
  });

  it('open: active at once and client.registered (mode open) for the owners, yet no sign-in until the email is confirmed; the first use of the link confirms and signs in', async () => {
    const { p, mail } = open;
    const email = unique('open');
    const reg = await p.s.api.post('/portal/v1/auth/register', { email, password: PASSWORD });
    expect(reg.status, reg.text).toBe(201);
    expect(reg.body.status).toBe('active');
    const events = await p.s.deps.db
      .selectFrom('events')
      .select(['type', 'payload'])
      .where('payload', '@>', JSON.stringify({ email }) as never)
      .execute();
    expect(events).toEqual([
      {
        type: 'client.registered',
        payload: { client_id: reg.body.id, email, status: 'active', method: 'password', registration_mode: 'open' },
      },
    ]);
    const early = await p.s.api.post('/portal/v1/auth/login', { email, password: PASSWORD });
    expect(early.status).toBe(403);
    expect(early.body.detail).toContain('confirm your email');
    await settle();
    const pair = await p.s.api.post(
      '/portal/v1/auth/callback',
      { token: await mail.tokenFor(email) },
      { headers: { cookie: cookiesOf(reg) } },
    );
    expect(pair.status, pair.text).toBe(200);
    expect((await p.s.api.get('/portal/v1/me', { token: pair.body.access_token })).body.client.email_verified_at).not.toBeNull();
    expect((await p.s.api.post('/portal/v1/auth/login', { email, password: PASSWORD })).status).toBe(200);
  });

  it('spec 3.1 rule 3: an existing email is 409, a rejected one too; approving or deleting the record unblocks it', async () => {
    const { p } = application;
    const email = unique('twice');
    const first = await p.s.api.post('/portal/v1/auth/register', { email, password: PASSWORD });
    expect(first.status).toBe(201);
    const again = await p.s.api.post('/portal/v1/auth/register', { email: email.toUpperCase(), password: PASSWORD });
    expect(again.status).toBe(409);
    expect(again.body.errors).toEqual({ email: 'already taken' });
    expect((await p.s.api.post(`/api/v1/clients/${first.body.id}/reject`, undefined, { token: p.token })).status).toBe(200);
    expect((await p.s.api.post('/portal/v1/auth/register', { email, password: PASSWORD })).status).toBe(409);
    expect((await p.s.api.delete(`/api/v1/clients/${first.body.id}`, { token: p.token })).status).toBe(204);
    expect((await p.s.api.post('/portal/v1/auth/register', { email, password: PASSWORD })).status).toBe(201);
    const audit = await p.s.deps.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('action', 'in', ['client.registered', 'client.registration_refused'])
      .where('details', '@>', JSON.stringify({ email }) as never)
      .execute();
    expect(audit.map((a) => a.action).sort()).toEqual([
      'client.registered',
      'client.registered',
      'client.registration_refused',
      'client.registration_refused',
    ]);
  });

  it('bad input is a 400 problem naming the fields and creates nothing', async () => {
    const { p } = open;
    const res = await p.s.api.post('/portal/v1/auth/register', { email: 'not-an-email', password: 'short', extra: 1 });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors)).toEqual(expect.arrayContaining(['email', 'password']));
    expect(await p.s.deps.db.selectFrom('clients').select('id').where('email', '=', 'not-an-email').executeTakeFirst()).toBeUndefined();
  });
});

describe('magic link (spec 3.3, 5.7, 7.2)', () => {
  it('an unknown email gets the same answer as a known one (202, the same body); only the known one is mailed', async () => {
    // Who gets a link, the audit and the mail cap: packages/domain-tests/test/auth/magic-link.test.ts.
    const { p, mail } = open;
    const known = (await p.post('/api/v1/clients', { email: unique('known') })) as { email: string };
    const a = await p.s.api.post('/portal/v1/auth/magic-link', { email: known.email });
    const b = await p.s.api.post('/portal/v1/auth/magic-link', { email: unique('nobody') });
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(b.body).toEqual(a.body);
    expect(await mail.tokenFor(known.email)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('the callback signs in once (200 with a token pair); the used link is a 401 problem', async () => {
    // Expiry, hashing and races: packages/domain-tests/test/auth/magic-link.test.ts.
    const { p, mail } = open;
    const client = (await p.post('/api/v1/clients', { email: unique('link') })) as { id: string; email: string };
    await p.s.api.post('/portal/v1/auth/magic-link', { email: client.email });
    const token = await mail.tokenFor(client.email);
    const first = await p.s.api.post('/portal/v1/auth/callback', { token });
    expect(first.status).toBe(200);
    expect(first.body.access_token).toBeTruthy();
    const again = await p.s.api.post('/portal/v1/auth/callback', { token });
    expect(again.status).toBe(401);
    expect(again.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });

  it('the mailed link opens the portal’s page (token in the fragment) and opening it uses nothing up; only the POST signs in', async () => {
    const { p, mail } = open;
    const client = (await p.post('/api/v1/clients', { email: unique('page') })) as { email: string };
    await p.s.api.post('/portal/v1/auth/magic-link', { email: client.email });
    const token = await mail.tokenFor(client.email);
    const text = mail.mails.filter((m) => m.to === client.email).at(-1)?.text ?? '';
    const url = new URL(/https?:\/\/\S+/.exec(text)?.[0] ?? '');
    // The portal web app's landing page; the API's bare page does the same at /portal/v1/auth/magic-link.
    expect(url.pathname).toBe('/portal/auth/magic-link');
    expect(url.search).toBe('');
    expect(url.hash).toBe(`#token=${token}`);
    // A mail scanner opening it (even with the token in the query) spends nothing.
    for (const path of ['/portal/v1/auth/magic-link', `/portal/v1/auth/magic-link?token=${token}`]) {
      const page = await fetch(`${p.s.url}${path}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await page.text()).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    }
    expect((await fetch(`${p.s.url}/portal/v1/auth/magic-link/page.js`)).headers.get('content-type')).toContain('javascript');
    expect((await p.s.api.post('/portal/v1/auth/callback', { token })).status).toBe(200);
  });

  it('a disabled client gets no link and a link already sent no longer signs in (403)', async () => {
    const { p, mail } = open;
    const client = (await p.post('/api/v1/clients', { email: unique('banned') })) as { id: string; email: string };
    await p.s.api.post('/portal/v1/auth/magic-link', { email: client.email });
    await settle();
    const token = await mail.tokenFor(client.email);
    expect((await p.s.api.patch(`/api/v1/clients/${client.id}`, { status: 'disabled' }, { token: p.token })).status).toBe(200);
    const before = mail.mails.length;
    expect((await p.s.api.post('/portal/v1/auth/magic-link', { email: client.email })).status).toBe(202);
    await settle();
    expect(mail.mails.length).toBe(before);
    const refused = await p.s.api.post('/portal/v1/auth/callback', { token });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('disabled');
  });

  it('budgets: a stranger flooding one email from one address is refused (429) while the customer, from another address, still gets links', async () => {
    const { p } = application;
    const client = (await p.post('/api/v1/clients', { email: unique('flooded') })) as { email: string };
    const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push((await p.s.api.post('/portal/v1/auth/magic-link', { email: client.email }, from('203.0.113.66'))).status);
    expect(statuses.slice(0, 5)).toEqual([202, 202, 202, 202, 202]);
    expect(statuses.at(-1)).toBe(429);
    expect((await p.s.api.post('/portal/v1/auth/magic-link', { email: client.email }, from('198.51.100.7'))).status).toBe(202);
  });
});

describe('tokens and scopes (spec 3.2, 5.2, 5.3, 7.2)', () => {
  it('a client token is refused on /api/v1 and an admin token on /portal/v1, before any business logic', async () => {
    const { p, mail } = open;
    const client = (await p.post('/api/v1/clients', { email: unique('scope') })) as { email: string };
    await p.s.api.post('/portal/v1/auth/magic-link', { email: client.email });
    await settle();
    const pair = (await p.s.api.post('/portal/v1/auth/callback', { token: await mail.tokenFor(client.email) })).body;
    const onAdmin = await p.s.api.get('/api/v1/clients', { token: pair.access_token });
    expect(onAdmin.status).toBe(401);
    const onPortal = await p.s.api.get('/portal/v1/me', { token: p.token });
    expect(onPortal.status).toBe(401);
    // Not even a body is looked at: an invalid body with the wrong scope is 401, not 400.
    expect((await p.s.api.post('/portal/v1/subscriptions/x/rotate-credentials', { junk: true }, { token: p.token })).status).toBe(401);
  });

  it('refresh rotates; a refresh token presented twice is refused and revokes every session of the client; logout revokes the current one', async () => {
    const { p, mail } = open;
    const client = (await p.post('/api/v1/clients', { email: unique('refresh') })) as { email: string };
    const signIn = async () => {
      await p.s.api.post('/portal/v1/auth/magic-link', { email: client.email });
      await settle();
      return (await p.s.api.post('/portal/v1/auth/callback', { token: await mail.tokenFor(client.email) })).body;
    };
    const a = await signIn();
    const b = await signIn();
    const rotated = await p.s.api.post('/portal/v1/auth/refresh', { refresh_token: a.refresh_token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(a.refresh_token);
    const reuse = await p.s.api.post('/portal/v1/auth/refresh', { refresh_token: a.refresh_token });
    expect(reuse.status).toBe(401);
    expect((await p.s.api.post('/portal/v1/auth/refresh', { refresh_token: rotated.body.refresh_token })).status).toBe(401);
    expect((await p.s.api.post('/portal/v1/auth/refresh', { refresh_token: b.refresh_token })).status).toBe(401);
    // An admin refresh token is not the portal's.
    const adminPair = await login(p.s, OWNER.email, OWNER.password);
    expect((await p.s.api.post('/portal/v1/auth/refresh', { refresh_token: adminPair.refresh_token })).status).toBe(401);
    expect((await p.s.api.post('/api/v1/auth/refresh', { refresh_token: adminPair.refresh_token })).status).toBe(200);

    const c = await signIn();
    expect((await p.s.api.post('/portal/v1/auth/logout', undefined, { token: c.access_token })).status).toBe(204);
    expect((await p.s.api.post('/portal/v1/auth/refresh', { refresh_token: c.refresh_token })).status).toBe(401);
  });

  it('access recovery (spec 5.7): signed in by link, the client sets a new password; the old one stops, other sessions end, this one stays', async () => {
    const { p, mail } = open;
    const email = unique('recover');
    const reg = await p.s.api.post('/portal/v1/auth/register', { email, password: 'the forgotten password' });
    expect(reg.status).toBe(201);
    const first = (await p.s.api.post('/portal/v1/auth/callback', { token: await mail.tokenFor(email) })).body;
    await p.s.api.post('/portal/v1/auth/magic-link', { email });
    const second = (await p.s.api.post('/portal/v1/auth/callback', { token: await mail.tokenFor(email) })).body;
    const weak = await p.s.api.put('/portal/v1/me/password', { password: 'short' }, { token: second.access_token });
    expect(weak.status).toBe(400);
    expect(weak.body.errors).toHaveProperty('password');
    expect((await p.s.api.put('/portal/v1/me/password', { password: PASSWORD }, { token: second.access_token })).status).toBe(204);
    expect((await p.s.api.post('/portal/v1/auth/login', { email, password: 'the forgotten password' })).status).toBe(401);
    expect((await p.s.api.post('/portal/v1/auth/login', { email, password: PASSWORD })).status).toBe(200);
    expect((await p.s.api.post('/portal/v1/auth/refresh', { refresh_token: first.refresh_token })).status).toBe(401);
    expect((await p.s.api.post('/portal/v1/auth/refresh', { refresh_token: second.refresh_token })).status).toBe(200);
  });

  it('portal password sign-in switched off: login and register answer 404; the magic link stays', async () => {
    const e = await env({ SVC_PORTAL_PASSWORD_LOGIN: 'false', SVC_PORTAL_REGISTRATION: 'open' });
    try {
      expect((await e.p.s.api.post('/portal/v1/auth/login', { email: unique('x'), password: PASSWORD })).status).toBe(404);
      expect((await e.p.s.api.post('/portal/v1/auth/register', { email: unique('x'), password: PASSWORD })).status).toBe(404);
      expect((await e.p.s.api.post('/portal/v1/auth/magic-link', { email: unique('x') })).status).toBe(202);
      expect((await e.p.s.api.get('/portal/v1/auth/methods')).body).toMatchObject({ magic_link: true, password: false });
      expect((await e.p.s.api.put('/portal/v1/me/password', { password: PASSWORD })).status).toBe(404);
    } finally {
      await stopAll(e);
    }
  });
});
