import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateAdminInput, updateAdmin } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, OWNERS, openapi } from '@svc/http';
import { AdminSchema, body, IdParam, json } from '../../schemas.ts';

export const UpdateAdminBody = openapi(UpdateAdminInput, 'UpdateAdmin');

export const route = defineRoute({
  method: 'patch',
  path: '/admins/{id}',
  tags: ['admins'],
  summary: 'Update an admin (merge); the last owner cannot be demoted',
  auth: { scope: 'admin', roles: OWNERS },
  request: { params: IdParam, ...body(UpdateAdminBody) },
  responses: {
    200: json(AdminSchema, 'Updated'),
    404: { description: 'No such admin' },
    409: { description: 'Last owner, or email taken' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateAdmin(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));
