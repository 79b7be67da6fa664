import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteAcmeAccount } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, problem } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/acme-accounts/{id}',
  tags: ['acme-accounts'],
  summary: 'Delete an ACME account; refused while a certificate is issued through it',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    204: { description: 'Deleted' },
    404: problem('No such ACME account'),
    409: problem('Used by certificates (blocked_by lists them)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteAcmeAccount(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
