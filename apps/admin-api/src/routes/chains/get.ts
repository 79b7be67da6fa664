import type { OpenAPIHono } from '@hono/zod-openapi';
import { getChain } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';
import { ChainSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/chains/{id}',
  tags: ['chains'],
  summary: 'One chain with its hops in order',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(ChainSchema, 'The chain'), 404: { description: 'No such chain' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getChain(c.get('deps'), c.req.valid('param').id), 200));
