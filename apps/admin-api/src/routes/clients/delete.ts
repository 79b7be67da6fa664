import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteClient } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/clients/{id}',
  tags: ['clients'],
  summary: 'Delete a client and its sessions; refused while it has subscriptions or payments',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    204: { description: 'Deleted' },
    404: { description: 'No such client' },
    409: { description: 'Still has subscriptions or payments (blocked_by names them)' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteClient(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
