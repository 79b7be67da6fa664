import type { OpenAPIHono } from '@hono/zod-openapi';
import { testWebhook } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { WebhookDeliverySchema } from './schemas.ts';

export const route = defineRoute({
  method: 'post',
  path: '/webhooks/{id}/test',
  tags: ['webhooks'],
  summary: 'Send a webhook.test ping to this endpoint; the answer is the delivery, its outcome shows in the delivery log',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: { 202: json(WebhookDeliverySchema, 'Queued'), 404: problem('No such webhook') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await testWebhook(actorContext(c), c.req.valid('param').id), 202));
