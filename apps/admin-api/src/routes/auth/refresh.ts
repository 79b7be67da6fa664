import type { OpenAPIHono } from '@hono/zod-openapi';
import { RefreshInput, refreshSession } from '@svc/domain';
import { type AppEnv, defineRoute, openapi, requestMeta } from '@svc/http';
import { body, json, TokenPairSchema } from '../../schemas.ts';

export const RefreshBody = openapi(RefreshInput, 'RefreshRequest');

export const route = defineRoute({
  method: 'post',
  path: '/auth/refresh',
  tags: ['auth'],
  summary: 'Rotate the refresh token; a used token presented again revokes every session of its admin',
  auth: null,
  request: body(RefreshBody),
  responses: { 200: json(TokenPairSchema, 'New token pair'), 401: { description: 'Unknown, used, expired or revoked' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const pair = await refreshSession(c.get('deps'), 'admin', c.req.valid('json'), requestMeta(c));
    return c.json(pair, 200);
  });
