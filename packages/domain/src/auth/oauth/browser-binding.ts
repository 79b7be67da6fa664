import { timingSafeEqual } from 'node:crypto';
import type { Config } from '@svc/config';
import type { OAuthSurface } from '@svc/db';
import { sha256Hex } from '../../shared/secrets.ts';
import { OAUTH_REQUEST_TTL_SECONDS, oauthRedirectUri } from './oauth-requests.ts';

/**
 * The cookie that binds an OAuth request to the browser that started it (RFC 6749 10.12,
 * RFC 9700 4.7): a random value set by the redirect (or the link from settings) and required
 * by the callback, whose SHA-256 is kept with the request. Without it, a state started in one
 * browser could be completed in another: a victim signed into the attacker's account (login
 * CSRF) or their identity linked to it (link CSRF).
 *
 * - HttpOnly: no script reads it; SameSite=Lax: the provider's redirect back (a top-level GET)
 *   carries it, a cross-site subrequest does not;
 * - Secure (and the `__Secure-` prefix, which a plain-http page cannot set) when the public
 *   base URL is https;
 * - Path: the callback of that surface and provider only, so no other request carries it;
 *   Max-Age: the request's 10 minutes. One name per surface: a second start in the same
 *   browser replaces the first, whose callback is then refused.
 */
export interface BrowserCookie {
  name: string;
  path: string;
  secure: boolean;
  maxAgeSeconds: number;
}

export function oauthBrowserCookie(config: Pick<Config, 'http'>, surface: OAuthSurface, provider: string): BrowserCookie {
  const callback = new URL(oauthRedirectUri(config, surface, provider));
  const secure = callback.protocol === 'https:';
  const base = surface === 'admin' ? 'svc_oauth_admin' : 'svc_oauth_portal';
  return { name: secure ? `__Secure-${base}` : base, path: callback.pathname, secure, maxAgeSeconds: OAUTH_REQUEST_TTL_SECONDS };
}

/** A value this server sets (32 random bytes, base64url); anything else a browser sends is ignored. */
const KEY_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Whether one of the cookie values the browser sent hashes to the request's `browser_hash`,
 * compared in constant time. A request without a hash (started before binding existed) binds
 * to no browser.
 */
export function browserMatches(browserHash: string | null, keys: readonly string[]): boolean {
  if (!browserHash) return false;
  const want = Buffer.from(browserHash, 'hex');
  let match = false;
  // Every value is compared (no early exit), at most a few: a browser sends one per name and path.
  for (const key of keys.slice(0, 8)) {
    if (!KEY_SHAPE.test(key)) continue;
    const got = Buffer.from(sha256Hex(key), 'hex');
    if (got.length === want.length && timingSafeEqual(got, want)) match = true;
  }
  return match;
}
