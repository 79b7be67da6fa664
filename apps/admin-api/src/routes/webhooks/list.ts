import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listWebhooks } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { WebhookSchema } from './schemas.ts';

export const WebhookPage = pageOf(WebhookSchema, 'WebhookPage');

export const route = defineRoute({
  method: 'get',
  path: '/webhooks',
  tags: ['webhooks'],
  summary: 'List webhook endpoints, oldest first (secrets are never shown)',
  auth: { scope: 'admin', roles: READERS },
  request: { query: z.object({ ...pageQuery }) },
  responses: { 200: json(WebhookPage, 'A page of webhook endpoints') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listWebhooks(actorContext(c), c.req.valid('query'))), 200));
