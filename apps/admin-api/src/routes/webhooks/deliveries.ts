import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listWebhookDeliveries } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { WebhookDeliverySchema, WebhookDeliveryStatus } from './schemas.ts';

export const WebhookDeliveryPage = pageOf(WebhookDeliverySchema, 'WebhookDeliveryPage');

export const route = defineRoute({
  method: 'get',
  path: '/webhooks/{id}/deliveries',
  tags: ['webhooks'],
  summary: "An endpoint's delivery log, newest first: attempts, status, the last answer",
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam, query: z.object({ ...pageQuery, status: WebhookDeliveryStatus.optional() }) },
  responses: { 200: json(WebhookDeliveryPage, 'A page of deliveries'), 404: problem('No such webhook') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) =>
    c.json(signedPage(c, await listWebhookDeliveries(actorContext(c), c.req.valid('param').id, c.req.valid('query'))), 200),
  );
