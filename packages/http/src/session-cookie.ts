import { z } from '@hono/zod-openapi';
import type { SubjectType } from '@svc/db';
import type { TokenPair } from '@svc/domain';
import { REFRESH_COOKIE_MODE, refreshCookie } from '@svc/domain';
import type { Context } from 'hono';
import { setCookie } from 'hono/cookie';
import { cookieValues } from './binding-cookie.ts';
import type { AppEnv } from './env.ts';

/**
 * The web apps' session mode on the token routes (issue 30.3): `?session=cookie` puts the
 * refresh token in an HttpOnly, SameSite=Strict cookie scoped to the refresh route
 * (domain/auth/refresh-cookie.ts) instead of the body; the body keeps the access token. Without
 * it the routes answer the JSON token pair of spec 4.3, unchanged.
 */
export const SessionModeQuery = z.object({
  session: z
    .enum(['body', REFRESH_COOKIE_MODE])
    .optional()
    .openapi({
      param: { name: 'session', in: 'query' },
      description:
        'Where the refresh token travels: `body` (default, the token pair) or `cookie` (an HttpOnly, SameSite=Strict cookie sent only to POST /auth/refresh; the body then has no refresh_token). For web apps on this origin.',
    }),
});

/** The token pair as the routes answer it: refresh_token absent in cookie mode. */
export const SessionTokensSchema = z
  .object({
    access_token: z.string(),
    refresh_token: z.string().optional().openapi({ description: 'absent with ?session=cookie (it is in the cookie)' }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().openapi({ description: 'seconds until the access token expires' }),
    refresh_expires_in: z.number().int(),
  })
  .openapi('SessionTokens');

const isHttps = (c: Context<AppEnv>) => new URL(c.req.url).protocol === 'https:';

export function wantsCookieSession(c: Context<AppEnv>): boolean {
  return c.req.query('session') === REFRESH_COOKIE_MODE;
}

/** The body to answer with; in cookie mode the refresh token is set as the cookie instead. */
export function answerTokens(c: Context<AppEnv>, subject: SubjectType, pair: TokenPair): z.infer<typeof SessionTokensSchema> {
  if (!wantsCookieSession(c)) return pair;
  setRefreshCookie(c, subject, pair.refresh_token);
  const { refresh_token: _, ...rest } = pair;
  return rest;
}

/** Puts a refresh token in the web app's cookie (a sign-in answered by a redirect: OAuth). */
export function setRefreshCookie(c: Context<AppEnv>, subject: SubjectType, refreshToken: string): void {
  const cookie = refreshCookie(c.get('deps').config, subject, isHttps(c));
  setCookie(c, cookie.name, refreshToken, {
    path: cookie.path,
    httpOnly: true,
    secure: cookie.secure,
    sameSite: 'Strict',
    maxAge: cookie.maxAgeSeconds,
  });
}

/** The refresh token a cookie-mode refresh presents (the last one, if the browser sent several). */
export function refreshTokenFromCookie(c: Context<AppEnv>, subject: SubjectType): string | undefined {
  const cookie = refreshCookie(c.get('deps').config, subject, isHttps(c));
  return cookieValues(c, cookie.name).at(-1);
}

/** Ends the browser's copy (sign-out, or a refresh that failed). */
export function clearRefreshCookie(c: Context<AppEnv>, subject: SubjectType): void {
  const cookie = refreshCookie(c.get('deps').config, subject, isHttps(c));
  setCookie(c, cookie.name, '', { path: cookie.path, httpOnly: true, secure: cookie.secure, sameSite: 'Strict', maxAge: 0 });
}
