import type { OpenAPIHono } from '@hono/zod-openapi';
import { getClient } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';
import { ClientSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/clients/{id}',
  tags: ['clients'],
  summary: 'One client',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(ClientSchema, 'The client'), 404: { description: 'No such client' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getClient(c.get('deps'), c.req.valid('param').id), 200));
