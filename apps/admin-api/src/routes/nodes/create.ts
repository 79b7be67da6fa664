import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateNodeInput, createNode } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { NodeSchema } from './schemas.ts';

export const CreateNodeBody = openapi(CreateNodeInput, 'CreateNode');

export const route = defineRoute({
  method: 'post',
  path: '/nodes',
  tags: ['nodes'],
  summary: 'Register a node (enabled, offline until its agent enrolls)',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateNodeBody),
  responses: { 201: json(NodeSchema, 'Created'), 409: { description: 'Name taken' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createNode(actorContext(c), c.req.valid('json')), 201));
