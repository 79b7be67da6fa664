import type { Actor, DomainContext, RequestMeta } from '@svc/domain';
import { withActor } from '@svc/domain';
import type { Context } from 'hono';
import type { AppEnv } from './env.ts';

export const requestMeta = (c: Context<AppEnv>): RequestMeta => ({
  ip: c.get('clientIp'),
  userAgent: c.req.header('user-agent') ?? null,
});

/** The domain context of an authenticated request: deps + the token's subject as actor. */
export function actorContext(c: Context<AppEnv>): DomainContext {
  const auth = c.get('auth');
  const actor: Actor = {
    type: auth.scope === 'admin' ? 'admin' : 'client',
    id: auth.sub,
    role: auth.role,
    ...(auth.tokenId ? { tokenId: auth.tokenId } : {}),
    ...requestMeta(c),
  };
  return withActor(c.get('deps'), actor);
}
