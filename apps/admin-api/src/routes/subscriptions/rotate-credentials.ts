import type { OpenAPIHono } from '@hono/zod-openapi';
import { rotateSubscriptionCredentials } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';
import { SubscriptionSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'post',
  path: '/subscriptions/{id}/rotate-credentials',
  tags: ['subscriptions'],
  summary: 'Re-issue the proxy credentials and the link token; the old link stops working',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: { 200: json(SubscriptionSchema, 'Rotated; the view carries the new link'), 404: { description: 'No such subscription' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await rotateSubscriptionCredentials(actorContext(c), c.req.valid('param').id), 200));
