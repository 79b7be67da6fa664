import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteInbound } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, problem } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/inbounds/{id}',
  tags: ['inbounds'],
  summary: 'Delete an inbound; refused while it is in an access group',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    204: { description: 'Deleted' },
    404: problem('No such inbound'),
    409: problem('In access groups (blocked_by.access_groups)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteInbound(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
