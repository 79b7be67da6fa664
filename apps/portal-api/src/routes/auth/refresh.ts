import type { OpenAPIHono } from '@hono/zod-openapi';
import { RefreshInput, refreshSession } from '@svc/domain';
import { type AppEnv, body, defineRoute, json, openapi, requestMeta, TokenPairSchema } from '@svc/http';

export const PortalRefreshBody = openapi(RefreshInput, 'PortalRefreshRequest');

export const route = defineRoute({
  method: 'post',
  path: '/auth/refresh',
  tags: ['auth'],
  summary: 'Rotate the refresh token; a used token presented again revokes every session of the client',
  auth: null,
  request: body(PortalRefreshBody),
  responses: {
    200: json(TokenPairSchema, 'New token pair'),
    401: { description: 'Unknown, used, expired or revoked (or an admin token)' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await refreshSession(c.get('deps'), 'client', c.req.valid('json'), requestMeta(c)), 200));
