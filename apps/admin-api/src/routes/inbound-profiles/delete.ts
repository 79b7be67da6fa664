import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteInboundProfile } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, problem } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/inbound-profiles/{id}',
  tags: ['inbound-profiles'],
  summary: 'Delete an inbound profile; refused while inbounds are bound to it',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    204: { description: 'Deleted' },
    404: problem('No such profile'),
    409: problem('Still bound by inbounds (blocked_by.inbounds)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteInboundProfile(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
