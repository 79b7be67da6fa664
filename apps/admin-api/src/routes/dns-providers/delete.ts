import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteDnsProvider } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, problem } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/dns-providers/{id}',
  tags: ['dns-providers'],
  summary: 'Delete a DNS provider; refused while a certificate uses it',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    204: { description: 'Deleted' },
    404: problem('No such DNS provider'),
    409: problem('Used by certificates (blocked_by lists them)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteDnsProvider(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
