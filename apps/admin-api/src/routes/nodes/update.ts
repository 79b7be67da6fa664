import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateNodeInput, updateNode } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json } from '../../schemas.ts';
import { NodeSchema } from './schemas.ts';

export const UpdateNodeBody = openapi(UpdateNodeInput, 'UpdateNode');

export const route = defineRoute({
  method: 'patch',
  path: '/nodes/{id}',
  tags: ['nodes'],
  summary: 'Update a node (merge); a new address bumps the nodes that dial it in chains',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateNodeBody) },
  responses: { 200: json(NodeSchema, 'Updated'), 404: { description: 'No such node' }, 409: { description: 'Name taken' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateNode(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));
