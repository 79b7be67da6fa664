import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateAccessGroupInput, updateAccessGroup } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json, problem } from '../../schemas.ts';
import { AccessGroupSchema } from './schemas.ts';

export const UpdateAccessGroupBody = openapi(UpdateAccessGroupInput, 'UpdateAccessGroup');

export const route = defineRoute({
  method: 'patch',
  path: '/access-groups/{id}',
  tags: ['access-groups'],
  summary: 'Update an access group (merge; inbound_ids is a full replacement)',
  description: 'Moves the desired revision of exactly the nodes of the added and the removed inbounds.',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateAccessGroupBody) },
  responses: { 200: json(AccessGroupSchema, 'Updated'), 404: problem('No such access group'), 409: problem('Name taken') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateAccessGroup(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));
