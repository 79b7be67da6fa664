import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteNode } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/nodes/{id}',
  tags: ['nodes'],
  summary: 'Delete a node; refused (409, blocked_by) while it is a hop of a chain or runs inbounds',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    204: { description: 'Deleted' },
    404: { description: 'No such node' },
    409: { description: 'A hop of a chain, or inbounds on it (blocked_by: {chains, inbounds})' },
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteNode(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
