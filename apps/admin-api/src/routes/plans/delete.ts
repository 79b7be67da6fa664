import type { OpenAPIHono } from '@hono/zod-openapi';
import { deletePlan } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, problem } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/plans/{id}',
  tags: ['plans'],
  summary: 'Delete a plan; refused while payments or subscriptions reference it (archive it instead)',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    204: { description: 'Deleted' },
    404: problem('No such plan'),
    409: problem('Referenced by payments or subscriptions (blocked_by lists them)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deletePlan(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
