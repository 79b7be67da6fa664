import type { OpenAPIHono } from '@hono/zod-openapi';
import { getNode } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';
import { NodeSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/nodes/{id}',
  tags: ['nodes'],
  summary: 'One node with its revisions and last status report',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(NodeSchema, 'The node'), 404: { description: 'No such node' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getNode(c.get('deps'), c.req.valid('param').id), 200));
