import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteChain } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/chains/{id}',
  tags: ['chains'],
  summary: 'Delete a chain and its hops; refused (409, blocked_by inbounds) while an inbound routes through it',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    204: { description: 'Deleted' },
    404: { description: 'No such chain' },
    409: { description: 'Inbounds route through it (blocked_by: {inbounds})' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteChain(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
