import { describe, expect, it } from 'vitest';
import { refreshCookie } from './refresh-cookie.ts';

const config = (public_base_url?: string) =>
  ({ http: { port: 8080, ...(public_base_url ? { public_base_url } : {}) }, auth: { refresh_token_ttl_seconds: 1209600 } }) as never;

describe('refreshCookie: where a web app keeps its refresh token', () => {
  it('is scoped to the refresh route of its own surface and lives as long as the refresh token', () => {
    expect(refreshCookie(config(), 'admin', false)).toEqual({
      name: 'svc_admin_refresh',
      path: '/api/v1/auth/refresh',
      secure: false,
      maxAgeSeconds: 1209600,
    });
    expect(refreshCookie(config(), 'client', false).path).toBe('/portal/v1/auth/refresh');
  });

  it('is Secure with the __Secure- prefix when the public base URL or the request is https', () => {
    expect(refreshCookie(config('https://panel.example.com'), 'admin', false)).toMatchObject({
      name: '__Secure-svc_admin_refresh',
      secure: true,
    });
    expect(refreshCookie(config(), 'admin', true)).toMatchObject({ name: '__Secure-svc_admin_refresh', secure: true });
  });

  it("carries a reverse proxy's path prefix, as the browser sees the route", () => {
    expect(refreshCookie(config('https://host.example/s3cr3t/'), 'admin', false).path).toBe('/s3cr3t/api/v1/auth/refresh');
  });
});
