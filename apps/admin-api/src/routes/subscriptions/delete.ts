import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteSubscription } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/subscriptions/{id}',
  tags: ['subscriptions'],
  summary: 'Delete a subscription with its usage history; its link stops working',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: { 204: { description: 'Deleted' }, 404: { description: 'No such subscription' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteSubscription(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
