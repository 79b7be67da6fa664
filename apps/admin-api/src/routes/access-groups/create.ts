import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateAccessGroupInput, createAccessGroup } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json, problem } from '../../schemas.ts';
import { AccessGroupSchema } from './schemas.ts';

export const CreateAccessGroupBody = openapi(CreateAccessGroupInput, 'CreateAccessGroup');

export const route = defineRoute({
  method: 'post',
  path: '/access-groups',
  tags: ['access-groups'],
  summary: 'Create an access group (a set of inbounds granted together)',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateAccessGroupBody),
  responses: { 201: json(AccessGroupSchema, 'Created'), 409: problem('Name taken') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createAccessGroup(actorContext(c), c.req.valid('json')), 201));
