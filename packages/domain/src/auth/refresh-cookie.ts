import type { Config } from '@svc/config';
import type { SubjectType } from '@svc/db';
import { publicBaseUrl } from '../shared/public-url.ts';

/**
 * Where a web app keeps its refresh token: a cookie no script can read, sent only with the
 * refresh call of its own surface (issue 30.3). Its access token lives in the page's memory;
 * a reload or a new tab gets a fresh one by POST {surface}/auth/refresh?session=cookie.
 *
 * - HttpOnly; SameSite=Strict: no cross-site request carries it (top-level navigations
 *   included); the refresh route accepts only a JSON body, which no form of another site can send;
 * - Secure, and the `__Secure-` prefix, when the public base URL (or the request) is https;
 * - Path: the refresh route of that surface, under the public base URL's path (a reverse
 *   proxy's prefix), so no other request carries it; Max-Age: the refresh token's lifetime.
 */
export interface RefreshCookie {
  name: string;
  path: string;
  secure: boolean;
  maxAgeSeconds: number;
}

export const REFRESH_COOKIE_MODE = 'cookie';

export function refreshCookie(config: Pick<Config, 'http' | 'auth'>, subject: SubjectType, requestIsHttps: boolean): RefreshCookie {
  const base = new URL(publicBaseUrl(config));
  const secure = base.protocol === 'https:' || requestIsHttps;
  const prefix = subject === 'admin' ? '/api/v1' : '/portal/v1';
  const name = subject === 'admin' ? 'svc_admin_refresh' : 'svc_portal_refresh';
  return {
    name: secure ? `__Secure-${name}` : name,
    path: `${base.pathname.replace(/\/+$/, '')}${prefix}/auth/refresh`,
    secure,
    maxAgeSeconds: config.auth.refresh_token_ttl_seconds,
  };
}
