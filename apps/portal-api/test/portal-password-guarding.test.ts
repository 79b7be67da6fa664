import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';
import { captureMail, type MailCapture, settle } from './mail-capture.ts';

// Issue 29 items 4 and 7 through real HTTP (docs/portal.md, "Budgets" and "Changing the
// password"). Addresses come from X-Forwarded-For (trust_proxy on). The account-wide budget is
// rate_limits.login.per_account, set to 30 here so that 60 guesses cross it (the default is 100
// per 15 minutes); the other windows are the defaults (20/min per address, 10/15 min per email
// and address).
let p: PortalTestServer;
let mail: MailCapture;
beforeAll(async () => {
  p = await startPortal(
    { SVC_SMTP_URL: 'smtp://127.0.0.1:1', SVC_TRUST_PROXY: 'true' },
    { rate_limits: { login: { per_account: { limit: 30, window_seconds: 900 } } } },
  );
  mail = await captureMail(p.s);
}, 60_000);
afterAll(async () => {
  await mail?.stop();
  await p?.stop();
});

const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
const unique = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;
const PASSWORD = 'the customer’s long password';
const HOME = '198.51.100.5';

async function aCustomer(): Promise<string> {
  const email = unique('customer');
  await p.post('/api/v1/clients', { email, password: PASSWORD });
  return email;
}
const login = (email: string, password: string, ip: string) => p.s.api.post('/portal/v1/auth/login', { email, password }, from(ip));
async function magicLink(email: string, ip: string) {
  expect((await p.s.api.post('/portal/v1/auth/magic-link', { email }, from(ip))).status).toBe(202);
  await settle();
  return p.s.api.post('/portal/v1/auth/callback', { token: await mail.tokenFor(email) }, from(ip));
}

describe('portal password guessing has an account-wide budget (issue 29.4)', () => {
  it('60 wrong passwords from 6 addresses end in 429 for that account; the magic link still signs in, and so does the right password from the customer’s own address', async () => {
    const email = await aCustomer();
    expect((await login(email, PASSWORD, HOME)).status).toBe(200); // the customer's address is known from now on (1 of the 30)
    const statuses: number[] = [];
    for (let a = 1; a <= 6; a++)
      for (let i = 0; i < 10; i++) statuses.push((await login(email, `guess ${a}.${i}`, `203.0.113.${a}`)).status);
    expect(statuses).toEqual([...Array(29).fill(401), ...Array(31).fill(429)]);
    const refused = await login(email, PASSWORD, '192.0.2.99');
    expect(refused.status).toBe(429); // a new address, right password included
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    // For that account only: another one answers from the same addresses.
    expect((await login(await aCustomer(), PASSWORD, '203.0.113.1')).status).toBe(200);
    expect((await login(email, PASSWORD, HOME)).status).toBe(200);
    const link = await magicLink(email, '192.0.2.98');
    expect(link.status, link.text).toBe(200);
    expect((await p.s.api.get('/portal/v1/me', { token: link.body.access_token })).body.client.email).toBe(email);
    // The address the link was used from is the customer's now, for the password too.
    expect((await login(email, PASSWORD, '192.0.2.98')).status).toBe(200);
  });
});

describe('PUT /portal/v1/me/password asks for the current password or a fresh magic-link sign-in (issue 29.7)', () => {
  it('a password session: without the current password 403, with a wrong one 403 (and it counts), with the right one 204', async () => {
    const email = await aCustomer();
    const ip = '198.51.100.40';
    const token = (await login(email, PASSWORD, ip)).body.access_token;
    const put = (body: object) => p.s.api.put('/portal/v1/me/password', body, { token, ...from(ip) });
    const missing = await put({ password: 'a new long password' });
    expect(missing.status).toBe(403);
    expect(missing.body).toMatchObject({ reason: 'current_password_required', errors: { current_password: expect.any(String) } });
    const wrong = await put({ password: 'a new long password', current_password: 'not my password' });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ reason: 'current_password_wrong', errors: { current_password: 'not your current password' } });
    const right = await put({ password: 'a new long password', current_password: PASSWORD });
    expect(right.status, right.text).toBe(204);
    expect((await login(email, 'a new long password', '198.51.100.41')).status).toBe(200);
    expect((await login(email, PASSWORD, '198.51.100.41')).status).toBe(401);
    // Wrong current passwords spend the sign-in budget of the email at this address (10 per 15 min, 3 spent above).
    const more: number[] = [];
    for (let i = 0; i < 8; i++) more.push((await put({ password: 'another long password', current_password: `guess ${i}` })).status);
    expect(more).toEqual([403, 403, 403, 403, 403, 403, 403, 429]);
    expect((await login(email, 'a new long password', ip)).status).toBe(429);
  });

  it('access recovery (spec 5.7): a customer who forgot the password signs in by link and sets a new one without the old; ten minutes later the link’s session no longer can', async () => {
    const email = await aCustomer();
    const ip = '198.51.100.50';
    const pair = (await magicLink(email, ip)).body;
    const set = await p.s.api.put(
      '/portal/v1/me/password',
      { password: 'remembered this time' },
      { token: pair.access_token, ...from(ip) },
    );
    expect(set.status, set.text).toBe(204);
    expect((await login(email, 'remembered this time', ip)).status).toBe(200);
    expect((await login(email, PASSWORD, ip)).status).toBe(401);

    p.s.clock.advance(10 * 60_000 + 1000);
    const stale = await p.s.api.put(
      '/portal/v1/me/password',
      { password: 'changed by a thief' },
      { token: pair.access_token, ...from(ip) },
    );
    expect(stale.status).toBe(403);
    expect(stale.body.reason).toBe('current_password_required');
    expect((await login(email, 'remembered this time', ip)).status).toBe(200);
  });
});
