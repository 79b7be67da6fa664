import type { OpenAPIHono } from '@hono/zod-openapi';
import { deletePaymentProvider } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, problem } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/payment-providers/{id}',
  tags: ['payment-providers'],
  summary: 'Delete a payment provider; refused while payments reference it',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: {
    204: { description: 'Deleted' },
    404: problem('No such payment provider'),
    409: problem('Referenced by payments (blocked_by lists them)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deletePaymentProvider(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
