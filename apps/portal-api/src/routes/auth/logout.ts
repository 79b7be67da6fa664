import type { OpenAPIHono } from '@hono/zod-openapi';
import { revokeSession } from '@svc/domain';
import { type AppEnv, actorContext, clearRefreshCookie, defineRoute } from '@svc/http';

export const route = defineRoute({
  method: 'post',
  path: '/auth/logout',
  tags: ['auth'],
  summary:
    'Revoke the current session (its refresh token stops working, its refresh cookie is cleared; the access token expires on its own)',
  auth: { scope: 'client' },
  responses: { 204: { description: 'Session revoked' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const ctx = actorContext(c);
    await revokeSession(ctx, ctx.actor, c.get('auth').sid);
    clearRefreshCookie(c, 'client');
    return c.body(null, 204);
  });
