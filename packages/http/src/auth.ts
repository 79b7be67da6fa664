import type { AdminRole } from '@svc/db';
import { authorize } from '@svc/domain';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from './env.ts';

/** Admin routes must name their roles (spec 5.4); client routes have none. */
export type RouteAuth =
  | {
      scope: 'admin';
      roles: readonly AdminRole[];
      /** Sessions only: no API token (token management, the session's own routes). */
      sessionOnly?: boolean;
    }
  | { scope: 'client'; roles?: undefined; sessionOnly?: undefined };

export const READERS: readonly AdminRole[] = ['owner', 'admin', 'viewer'];
export const WRITERS: readonly AdminRole[] = ['owner', 'admin'];
export const OWNERS: readonly AdminRole[] = ['owner'];

/**
 * Declared on the route, runs before validation and before the handler: a missing or bad
 * token, a token of the other surface's scope, or a role not listed never reach business code.
 */
export function requireAuth(auth: RouteAuth, route: { family?: string | undefined; write: boolean } = { write: true }) {
  const need = { ...auth, family: route.family, write: route.write };
  return createMiddleware<AppEnv>(async (c, next) => {
    const claims = await authorize(c.get('deps'), c.req.header('authorization'), need, {
      ip: c.get('clientIp'),
      userAgent: c.req.header('user-agent') ?? null,
      // Only computed for the audit entry of a refusal.
      route: () => `${c.req.method} ${c.req.routePath}`,
    });
    c.set('auth', claims);
    await next();
  });
}
