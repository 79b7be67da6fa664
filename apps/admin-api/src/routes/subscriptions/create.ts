import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { createSubscription } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { AccessGroupIds, Instant, Note, Renewal, SubscriptionSchema, TrafficLimit } from './schemas.ts';

export const CreateSubscriptionBody = z
  .object({
    client_id: z.string().min(1).max(64),
    access_group_ids: AccessGroupIds,
    traffic_limit_bytes: TrafficLimit.optional(),
    expires_at: Instant.nullable().optional().openapi({ description: 'in the future; null or absent never expires' }),
    renewal: Renewal.optional().openapi({ description: 'when used_bytes starts over; default no_reset' }),
    note: Note.optional(),
  })
  .strict()
  .openapi('CreateSubscription');

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
