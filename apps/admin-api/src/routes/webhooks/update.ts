import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateWebhookInput, updateWebhook } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json, problem } from '../../schemas.ts';
import { WebhookSchema } from './schemas.ts';

export const UpdateWebhookBody = openapi(UpdateWebhookInput, 'UpdateWebhook');

export const route = defineRoute({
  method: 'patch',
  path: '/webhooks/{id}',
  tags: ['webhooks'],
  summary: 'Update a webhook endpoint (merge: url, description, event_types, enabled)',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateWebhookBody) },
  responses: { 200: json(WebhookSchema, 'Updated'), 404: problem('No such webhook') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateWebhook(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));
