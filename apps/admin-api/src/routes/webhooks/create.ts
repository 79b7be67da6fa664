import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateWebhookInput, createWebhook } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { WebhookWithSecretSchema } from './schemas.ts';

export const CreateWebhookBody = openapi(CreateWebhookInput, 'CreateWebhook');

export const route = defineRoute({
  method: 'post',
  path: '/webhooks',
  tags: ['webhooks'],
  summary: 'Register a webhook endpoint; the answer carries its signing secret, shown this once',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateWebhookBody),
  responses: { 201: json(WebhookWithSecretSchema, 'Created (with the secret)') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createWebhook(actorContext(c), c.req.valid('json')), 201));
