import { setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

/**
 * The web apps' session mode (issue 30.3): with ?session=cookie the refresh token travels only
 * in an HttpOnly, SameSite=Strict cookie scoped to the refresh route, never in a body a script
 * reads; the JSON token pair of spec 4.3 is unchanged without it; rotation and reuse detection
 * (spec 3.2) hold in both modes.
 */

const OWNER = { email: 'cookie-owner@example.com', password: 'cookie-owner-password-1' };

async function post(s: TestServer, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** The Set-Cookie of `name` split into its value and attributes (lower-cased names). */
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

describe('refresh token in a cookie (?session=cookie) on plain http', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startAdminApi();
    await setupOwner(s, OWNER);
  });
  afterAll(() => s.stop());

  it('login puts the refresh token in an HttpOnly, SameSite=Strict cookie scoped to the refresh route, not in the body', async () => {
    const res = await post(s, '/api/v1/auth/login?session=cookie', OWNER);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.access_token).toEqual(expect.any(String));
    expect(body).not.toHaveProperty('refresh_token');
    const c = cookie(res, 'svc_admin_refresh');
    expect(c?.value).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(c?.attrs).toMatchObject({ httponly: '', samesite: 'Strict', path: '/api/v1/auth/refresh' });
    expect(Number(c?.attrs['max-age'])).toBe(s.config.auth.refresh_token_ttl_seconds);
    expect(c?.attrs).not.toHaveProperty('secure');
  });

  it('without the parameter the token pair comes in the body and no cookie is set (spec 4.3 unchanged)', async () => {
    const res = await post(s, '/api/v1/auth/login', OWNER);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Record<string, unknown>).refresh_token).toEqual(expect.any(String));
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('refresh reads the cookie, rotates it, and a rotated cookie presented again revokes every session (spec 3.2)', async () => {
    const login = await post(s, '/api/v1/auth/login?session=cookie', OWNER);
    const first = cookie(login, 'svc_admin_refresh')?.value as string;
    const refreshed = await post(s, '/api/v1/auth/refresh?session=cookie', {}, { cookie: `svc_admin_refresh=${first}` });
    expect(refreshed.status).toBe(200);
    const body = (await refreshed.json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty('refresh_token');
    const second = cookie(refreshed, 'svc_admin_refresh')?.value as string;
    expect(second).not.toBe(first);
    const me = await fetch(`${s.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${body.access_token}` } });
    expect(me.status).toBe(200);

    // The old cookie again (a stolen copy): refused, the browser's copy is cleared, and the session family is revoked.
    const reused = await post(s, '/api/v1/auth/refresh?session=cookie', {}, { cookie: `svc_admin_refresh=${first}` });
    expect(reused.status).toBe(401);
    expect(cookie(reused, 'svc_admin_refresh')?.attrs['max-age']).toBe('0');
    const afterReuse = await post(s, '/api/v1/auth/refresh?session=cookie', {}, { cookie: `svc_admin_refresh=${second}` });
    expect(afterReuse.status).toBe(401);
  });

  it('refresh in cookie mode without the cookie is 401; in body mode without a token it is 400 naming the field', async () => {
    const none = await post(s, '/api/v1/auth/refresh?session=cookie', {});
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toContain('application/problem+json');
    const bodyMode = await post(s, '/api/v1/auth/refresh', {});
    expect(bodyMode.status).toBe(400);
    expect(((await bodyMode.json()) as { errors: Record<string, string> }).errors).toHaveProperty('refresh_token');
  });

  it('a form of another site cannot drive it: a non-JSON body is refused before the cookie is read', async () => {
    const login = await post(s, '/api/v1/auth/login?session=cookie', OWNER);
    const value = cookie(login, 'svc_admin_refresh')?.value as string;
    const form = await fetch(`${s.url}/api/v1/auth/refresh?session=cookie`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', cookie: `svc_admin_refresh=${value}` },
      body: '{}',
    });
    expect(form.status).toBe(415);
    // Untouched: the cookie still refreshes.
    expect((await post(s, '/api/v1/auth/refresh?session=cookie', {}, { cookie: `svc_admin_refresh=${value}` })).status).toBe(200);
  });

  it('an unknown session mode is a 400 and signs nobody in', async () => {
    const res = await post(s, '/api/v1/auth/login?session=localStorage', OWNER);
    expect(res.status).toBe(400);
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('logout clears the cookie and ends its session', async () => {
    const login = await post(s, '/api/v1/auth/login?session=cookie', OWNER);
    const value = cookie(login, 'svc_admin_refresh')?.value as string;
    const { access_token } = (await login.json()) as { access_token: string };
    const out = await fetch(`${s.url}/api/v1/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${access_token}` } });
    expect(out.status).toBe(204);
    expect(cookie(out, 'svc_admin_refresh')?.attrs).toMatchObject({ 'max-age': '0', path: '/api/v1/auth/refresh' });
    expect((await post(s, '/api/v1/auth/refresh?session=cookie', {}, { cookie: `svc_admin_refresh=${value}` })).status).toBe(401);
  });
});

describe('refresh cookie behind an https reverse proxy with a path prefix', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startAdminApi({ env: { SVC_PUBLIC_BASE_URL: 'https://panel.example.com/s3cr3t' } });
    await setupOwner(s, OWNER);
  });
  afterAll(() => s.stop());

  it('is Secure, named __Secure-, and scoped to the prefixed refresh route the browser sees', async () => {
    const res = await post(s, '/api/v1/auth/login?session=cookie', OWNER);
    expect(res.status).toBe(200);
    const c = cookie(res, '__Secure-svc_admin_refresh');
    expect(c?.attrs).toMatchObject({ secure: '', httponly: '', samesite: 'Strict', path: '/s3cr3t/api/v1/auth/refresh' });
    const again = await post(s, '/api/v1/auth/refresh?session=cookie', {}, { cookie: `__Secure-svc_admin_refresh=${c?.value}` });
    expect(again.status).toBe(200);
  });
});
