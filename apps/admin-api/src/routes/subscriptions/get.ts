import type { OpenAPIHono } from '@hono/zod-openapi';
import { getSubscription } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, READERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';
import { SubscriptionSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/subscriptions/{id}',
  tags: ['subscriptions'],
  summary: 'One subscription',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(SubscriptionSchema, 'The subscription'), 404: { description: 'No such subscription' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getSubscription(actorContext(c), c.req.valid('param').id), 200));
