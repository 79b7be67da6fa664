import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteAccessGroup } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, problem } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/access-groups/{id}',
  tags: ['access-groups'],
  summary: 'Delete an access group; refused while subscriptions or plans are granted it',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    204: { description: 'Deleted' },
    404: problem('No such access group'),
    409: problem('Granted by subscriptions or plans (blocked_by.subscriptions, blocked_by.plans)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteAccessGroup(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
