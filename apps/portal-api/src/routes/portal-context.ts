import type { PortalCtx } from '@svc/domain';
import { type AppEnv, actorContext } from '@svc/http';
import type { Context } from 'hono';

/** The domain context of a portal request: the client of the access token acts. */
export function portalContext(c: Context<AppEnv>): PortalCtx {
  const ctx = actorContext(c);
  return ctx as PortalCtx;
}
