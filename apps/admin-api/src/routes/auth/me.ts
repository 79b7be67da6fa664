import type { OpenAPIHono } from '@hono/zod-openapi';
import { getCurrentAdmin } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { AdminSchema, json } from '../../schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/auth/me',
  tags: ['auth'],
  summary: 'The signed-in admin',
  auth: { scope: 'admin', roles: READERS },
  responses: { 200: json(AdminSchema, 'Current admin') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getCurrentAdmin(c.get('deps'), c.get('auth').sub), 200));
