import type { OpenAPIHono } from '@hono/zod-openapi';
import { getWebhook } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { WebhookSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/webhooks/{id}',
  tags: ['webhooks'],
  summary: 'One webhook endpoint (never its secret)',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(WebhookSchema, 'The webhook endpoint'), 404: problem('No such webhook') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getWebhook(actorContext(c), c.req.valid('param').id), 200));
