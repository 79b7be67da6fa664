import type { OpenAPIHono } from '@hono/zod-openapi';
import { getAdmin } from '@svc/domain';
import { type AppEnv, defineRoute, OWNERS } from '@svc/http';
import { AdminSchema, IdParam, json } from '../../schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/admins/{id}',
  tags: ['admins'],
  summary: 'One admin',
  auth: { scope: 'admin', roles: OWNERS },
  request: { params: IdParam },
  responses: { 200: json(AdminSchema, 'The admin'), 404: { description: 'No such admin' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getAdmin(c.get('deps'), c.req.valid('param').id), 200));
