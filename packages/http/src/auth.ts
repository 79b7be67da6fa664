import type { AdminRole } from '@svc/db';
import { ForbiddenError, type Scope, UnauthenticatedError } from '@svc/domain';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from './env.ts';

export interface RouteAuth {
  scope: Scope;
  /** Admin roles allowed; omitted for client-scope routes. */
  roles?: readonly AdminRole[];
}

export const READERS: readonly AdminRole[] = ['owner', 'admin', 'viewer'];
export const WRITERS: readonly AdminRole[] = ['owner', 'admin'];
export const OWNERS: readonly AdminRole[] = ['owner'];

/**
 * Declared on the route, runs before validation and before the handler: a missing or bad
 * token, a token of the other surface's scope, or a role not listed never reach business code.
 */
export function requireAuth(auth: RouteAuth) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header('authorization');
    const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!m) throw new UnauthenticatedError('missing bearer token');
    const claims = await c.get('deps').tokens.verifyAccess(m[1] as string, auth.scope);
    if (auth.roles && (!claims.role || !auth.roles.includes(claims.role))) {
      throw new ForbiddenError(`this action needs role ${auth.roles.join(' or ')}`);
    }
    c.set('auth', claims);
    await next();
  });
}
