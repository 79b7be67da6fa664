import { OWNER } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';
import { captureMail, type MailCapture, settle } from './mail-capture.ts';

/**
 * The portal web app's session mode (issue 32 item 2, as the admin panel's, issue 30.3): with
 * ?session=cookie the customer's refresh token travels only in an HttpOnly, SameSite=Strict
 * cookie scoped to POST /portal/v1/auth/refresh, never in a body a script reads; password and
 * magic-link sign-in both set it, refresh rotates it, a rotated one presented again revokes the
 * family (spec 3.2), sign-out clears it. Without the parameter the token pair of spec 4.6 is
 * unchanged. The admin's cookie never refreshes a customer, nor the other way round.
 */
let p: PortalTestServer;
let mail: MailCapture;
beforeAll(async () => {
  p = await startPortal({ SVC_SMTP_URL: 'smtp://127.0.0.1:1' });
  mail = await captureMail(p.s);
}, 60_000);
afterAll(async () => {
  await mail?.stop();
  await p?.stop();
});

const PASSWORD = 'a customer’s long password';
const unique = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${p.s.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** The Set-Cookie of `name`: its value and attributes (lower-cased names). */
function cookie(res: Response, name: string): { value: string; attrs: Record<string, string> } | null {
  for (const line of res.headers.getSetCookie()) {
    const [pair, ...rest] = line.split(';');
    const eq = (pair as string).indexOf('=');
    if ((pair as string).slice(0, eq).trim() !== name) continue;
    const attrs: Record<string, string> = {};
    for (const a of rest) {
      const [k, v = ''] = a.split('=');
      attrs[(k as string).trim().toLowerCase()] = v.trim();
    }
    return { value: (pair as string).slice(eq + 1), attrs };
  }
  return null;
}

async function aCustomer(): Promise<string> {
  const email = unique('cookie');
  await p.post('/api/v1/clients', { email, password: PASSWORD });
  return email;
}

describe('the portal refresh token in a cookie (?session=cookie)', () => {
  it('password sign-in sets it HttpOnly, SameSite=Strict, scoped to the portal refresh route; the body has no refresh token', async () => {
    const email = await aCustomer();
    const res = await post('/portal/v1/auth/login?session=cookie', { email, password: PASSWORD });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.access_token).toEqual(expect.any(String));
    expect(body).not.toHaveProperty('refresh_token');
    const c = cookie(res, 'svc_portal_refresh');
    expect(c?.value).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(c?.attrs).toMatchObject({ httponly: '', samesite: 'Strict', path: '/portal/v1/auth/refresh' });
    // Without the parameter: spec 4.6's token pair, no cookie.
    const plain = await post('/portal/v1/auth/login', { email, password: PASSWORD });
    expect(((await plain.json()) as Record<string, unknown>).refresh_token).toEqual(expect.any(String));
    expect(plain.headers.getSetCookie()).toEqual([]);
  });

  it('the magic link signs in the same way', async () => {
    const email = await aCustomer();
    expect((await p.s.api.post('/portal/v1/auth/magic-link', { email })).status).toBe(202);
    await settle();
    const res = await post('/portal/v1/auth/callback?session=cookie', { token: await mail.tokenFor(email) });
    expect(res.status).toBe(200);
    expect((await res.json()) as Record<string, unknown>).not.toHaveProperty('refresh_token');
    expect(cookie(res, 'svc_portal_refresh')?.attrs).toMatchObject({ httponly: '', path: '/portal/v1/auth/refresh' });
  });

  it('refresh reads and rotates it; the old one again is refused, cleared, and revokes the family; sign-out clears it', async () => {
    const email = await aCustomer();
    const login = await post('/portal/v1/auth/login?session=cookie', { email, password: PASSWORD });
    const first = cookie(login, 'svc_portal_refresh')?.value as string;
    const refreshed = await post('/portal/v1/auth/refresh?session=cookie', {}, { cookie: `svc_portal_refresh=${first}` });
    expect(refreshed.status).toBe(200);
    const { access_token } = (await refreshed.json()) as { access_token: string };
    const second = cookie(refreshed, 'svc_portal_refresh')?.value as string;
    expect(second).not.toBe(first);
    expect((await fetch(`${p.s.url}/portal/v1/me`, { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(200);

    const reused = await post('/portal/v1/auth/refresh?session=cookie', {}, { cookie: `svc_portal_refresh=${first}` });
    expect(reused.status).toBe(401);
    expect(cookie(reused, 'svc_portal_refresh')?.attrs['max-age']).toBe('0');
    expect((await post('/portal/v1/auth/refresh?session=cookie', {}, { cookie: `svc_portal_refresh=${second}` })).status).toBe(401);

    const again = await post('/portal/v1/auth/login?session=cookie', { email, password: PASSWORD });
    const value = cookie(again, 'svc_portal_refresh')?.value as string;
    const token = ((await again.json()) as { access_token: string }).access_token;
    const out = await fetch(`${p.s.url}/portal/v1/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(out.status).toBe(204);
    expect(cookie(out, 'svc_portal_refresh')?.attrs).toMatchObject({ 'max-age': '0', path: '/portal/v1/auth/refresh' });
    expect((await post('/portal/v1/auth/refresh?session=cookie', {}, { cookie: `svc_portal_refresh=${value}` })).status).toBe(401);
  });

  it('sign out everywhere ends every session of the customer, this one included, and clears this browser’s cookie; another customer keeps theirs', async () => {
    const email = await aCustomer();
    const other = await aCustomer();
    const signIn = async (who: string) => {
      const res = await post('/portal/v1/auth/login?session=cookie', { email: who, password: PASSWORD });
      return {
        cookie: cookie(res, 'svc_portal_refresh')?.value as string,
        token: ((await res.json()) as { access_token: string }).access_token,
      };
    };
    const [phone, laptop, theirs] = [await signIn(email), await signIn(email), await signIn(other)];
    const res = await fetch(`${p.s.url}/portal/v1/auth/logout-everywhere`, {
      method: 'POST',
      headers: { authorization: `Bearer ${laptop.token}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { sessions_ended: number }).sessions_ended).toBe(2);
    expect(cookie(res, 'svc_portal_refresh')?.attrs['max-age']).toBe('0');
    for (const s of [phone, laptop])
      expect((await post('/portal/v1/auth/refresh?session=cookie', {}, { cookie: `svc_portal_refresh=${s.cookie}` })).status).toBe(401);
    expect((await post('/portal/v1/auth/refresh?session=cookie', {}, { cookie: `svc_portal_refresh=${theirs.cookie}` })).status).toBe(200);
    expect((await fetch(`${p.s.url}/portal/v1/auth/logout-everywhere`, { method: 'POST' })).status).toBe(401);
  });

  it('a refused sign-in says why in words and in a code a front end translates (client-disabled), and sets no cookie', async () => {
    const email = unique('refused');
    const made = (await p.post('/api/v1/clients', { email, password: PASSWORD })) as { id: string };
    expect((await p.s.api.patch(`/api/v1/clients/${made.id}`, { status: 'disabled' }, { token: p.token })).status).toBe(200);
    const res = await post('/portal/v1/auth/login?session=cookie', { email, password: PASSWORD });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: 'client-disabled', detail: expect.stringContaining('disabled') });
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('without the cookie: 401 in cookie mode, 400 naming the field in body mode; an admin’s refresh token is no customer’s', async () => {
    expect((await post('/portal/v1/auth/refresh?session=cookie', {})).status).toBe(401);
    const bodyMode = await post('/portal/v1/auth/refresh', {});
    expect(bodyMode.status).toBe(400);
    expect(((await bodyMode.json()) as { errors: Record<string, string> }).errors).toHaveProperty('refresh_token');
    const admin = await post('/api/v1/auth/login?session=cookie', OWNER);
    const adminCookie = cookie(admin, 'svc_admin_refresh')?.value as string;
    expect(adminCookie).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const crossed = await post('/portal/v1/auth/refresh?session=cookie', {}, { cookie: `svc_portal_refresh=${adminCookie}` });
    expect(crossed.status).toBe(401);
  });
});
