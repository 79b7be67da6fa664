import type { OpenAPIHono } from '@hono/zod-openapi';
import { revokeApiToken } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, problem } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/api-tokens/{id}',
  tags: ['api-tokens'],
  summary: 'Revoke an API token: refused at once by every replica (its creator, or an owner)',
  auth: { scope: 'admin', roles: WRITERS, sessionOnly: true },
  request: { params: IdParam },
  responses: { 204: { description: 'Revoked' }, 404: problem('No such token of yours') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await revokeApiToken(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
