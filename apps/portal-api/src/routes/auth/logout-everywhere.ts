import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { revokeEverySession } from '@svc/domain';
import { type AppEnv, actorContext, clearRefreshCookie, defineRoute, json } from '@svc/http';

export const LogoutEverywhereSchema = z
  .object({ sessions_ended: z.number().int().openapi({ description: 'How many sessions were ended, this one included' }) })
  .openapi('PortalLogoutEverywhere');

export const route = defineRoute({
  method: 'post',
  path: '/auth/logout-everywhere',
  tags: ['auth'],
  summary:
    "Sign out everywhere: every session of the customer is revoked, this one included (each refresh token stops working, this browser's refresh cookie is cleared; access tokens expire on their own)",
  description: 'Not in the spec (ours): a customer who lost a device, or shared a password, ends every sign-in at once.',
  auth: { scope: 'client' },
  responses: { 200: json(LogoutEverywhereSchema, 'Sessions ended') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const ctx = actorContext(c);
    const ended = await revokeEverySession(ctx, ctx.actor);
    clearRefreshCookie(c, 'client');
    return c.json({ sessions_ended: ended }, 200);
  });
