import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { updateSubscription } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, IdParam, json } from '../../schemas.ts';
import { AccessGroupIds, Instant, Note, Renewal, SubscriptionSchema, TrafficLimit } from './schemas.ts';

export const UpdateSubscriptionBody = z
  .object({
    renewal: Renewal.optional(),
    traffic_limit_bytes: TrafficLimit.optional(),
    status: z
      .enum(['active', 'disabled'])
      .optional()
      .openapi({ description: 'the admin switch; limited and expired are computed and cannot be set' }),
    expires_at: Instant.nullable().optional().openapi({ description: 'null never expires; a past time expires it now' }),
    access_group_ids: AccessGroupIds.optional().openapi({ description: 'replaces the whole list' }),
    note: Note.optional(),
  })
  .strict()
  .openapi('UpdateSubscription');

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
