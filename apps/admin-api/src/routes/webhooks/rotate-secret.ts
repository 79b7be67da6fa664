import type { OpenAPIHono } from '@hono/zod-openapi';
import { rotateWebhookSecret } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { WebhookWithSecretSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'post',
  path: '/webhooks/{id}/rotate-secret',
  tags: ['webhooks'],
  summary: 'Replace the signing secret at once (the old one stops signing); the new one is shown this once',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: { 200: json(WebhookWithSecretSchema, 'The endpoint with its new secret'), 404: problem('No such webhook') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await rotateWebhookSecret(actorContext(c), c.req.valid('param').id), 200));
