import type { Config } from '@svc/config';
import { publicBaseUrl } from '../shared/public-url.ts';
import type { BrowserCookie } from './oauth/browser-binding.ts';

/** Spec 8: a magic link lasts 15 minutes; the registering browser's cookie no longer. */
const REGISTRATION_COOKIE_SECONDS = 15 * 60;

/**
 * The cookie that binds a password registration to the browser that registered (docs/portal.md,
 * "A password only with a confirmed email"): POST /portal/v1/auth/register sets a random value,
 * whose SHA-256 rides on the confirmation link beside the chosen password's hash; the link sets
 * that password only when the callback comes from a browser that holds the value. Someone who
 * registers another person's address cannot click the link in that person's mailbox, and the
 * person who clicks it gets no password chosen by somebody else: they are signed in and choose
 * one (PUT /portal/v1/me/password within minutes of that sign-in). HttpOnly, SameSite=Lax (the
 * portal's own page posts the callback), the callback's path only, Secure (with the `__Secure-`
 * prefix) under an https public base URL.
 */
export function registrationBrowserCookie(config: Pick<Config, 'http'>): BrowserCookie {
  const callback = new URL(`${publicBaseUrl(config)}/portal/v1/auth/callback`);
  const secure = callback.protocol === 'https:';
  return {
    name: secure ? '__Secure-svc_registration' : 'svc_registration',
    path: callback.pathname,
    secure,
    maxAgeSeconds: REGISTRATION_COOKIE_SECONDS,
  };
}
