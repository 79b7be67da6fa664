import type { Context } from 'hono';
import { setCookie } from 'hono/cookie';
import type { AppEnv } from './env.ts';

/** Where and how a browser-binding cookie is kept (the domain decides: OAuth requests, registrations). */
export interface BindingCookie {
  name: string;
  path: string;
  secure: boolean;
  maxAgeSeconds: number;
}

/** Sets (or, with '', clears) a cookie that binds a request to this browser: HttpOnly, SameSite=Lax. */
export function setBindingCookie(c: Context<AppEnv>, cookie: BindingCookie, value: string): void {
  setCookie(c, cookie.name, value, {
    path: cookie.path,
    httpOnly: true,
    secure: cookie.secure,
    sameSite: 'Lax',
    maxAge: value ? cookie.maxAgeSeconds : 0,
  });
}

/** Every value the browser sent under `name` (a name set twice, at two paths, comes twice). */
export function cookieValues(c: Context<AppEnv>, name: string): string[] {
  const values: string[] = [];
  for (const pair of (c.req.header('cookie') ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) values.push(pair.slice(eq + 1).trim());
  }
  return values;
}
