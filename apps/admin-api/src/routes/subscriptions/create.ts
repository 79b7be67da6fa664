import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateSubscriptionInput, createSubscription } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { SubscriptionSchema } from './schemas.ts';

export const CreateSubscriptionBody = openapi(CreateSubscriptionInput, 'CreateSubscription');

export const route = defineRoute({
  method: 'post',
  path: '/subscriptions',
  tags: ['subscriptions'],
  summary: 'Create a subscription with its own proxy credentials and link',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateSubscriptionBody),
  responses: { 201: json(SubscriptionSchema, 'Created') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createSubscription(actorContext(c), c.req.valid('json')), 201));
