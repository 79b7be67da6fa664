import type { OpenAPIHono } from '@hono/zod-openapi';
import { deleteWebhook } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, problem } from '../../schemas.ts';

export const route = defineRoute({
  method: 'delete',
  path: '/webhooks/{id}',
  tags: ['webhooks'],
  summary: 'Delete a webhook endpoint and its delivery log (pending deliveries are dropped)',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: { 204: { description: 'Deleted' }, 404: problem('No such webhook') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    await deleteWebhook(actorContext(c), c.req.valid('param').id);
    return c.body(null, 204);
  });
