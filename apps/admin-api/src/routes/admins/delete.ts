import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteAdmin } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, OWNERS } from '@svc/http';
import { IdParam } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/admins/{id}',
  tags: ['admins'],
  summary: 'Delete an admin and end their sessions; the last owner cannot be deleted',
  auth: { scope: 'admin', roles: OWNERS },
  request: { params: IdParam },
  responses: { 204: { description: 'Deleted' }, 404: { description: 'No such admin' }, 409: { description: 'Last owner' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteAdmin(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
