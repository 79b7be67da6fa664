import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateSubscriptionInput, updateSubscription } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json } from '../../schemas.ts';
import { SubscriptionSchema } from './schemas.ts';

export const UpdateSubscriptionBody = openapi(UpdateSubscriptionInput, 'UpdateSubscription');

export const route = defineRoute({
  method: 'patch',
  path: '/subscriptions/{id}',
  tags: ['subscriptions'],
  summary: 'Update a subscription (merge); the status is computed again',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateSubscriptionBody) },
  responses: { 200: json(SubscriptionSchema, 'Updated'), 404: { description: 'No such subscription' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateSubscription(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));
