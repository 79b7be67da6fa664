import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { getSubscriptionUsage, Instant } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';

const Granularity = z.enum(['hour', 'day', 'month']);

export const SubscriptionUsageSchema = z
  .object({
    subscription_id: z.string(),
    granularity: Granularity,
    from: z.string().openapi({ format: 'date-time', description: 'from, rounded down to the granularity' }),
    to: z.string().openapi({ format: 'date-time', description: 'to, rounded up to the granularity' }),
    items: z.array(
      z.object({
        start: z.string().openapi({ format: 'date-time' }),
        uplink_bytes: z.number().int(),
        downlink_bytes: z.number().int(),
      }),
    ),
  })
  .openapi('SubscriptionUsage');

export const route = defineRoute({
  method: 'get',
  path: '/subscriptions/{id}/usage',
  tags: ['subscriptions'],
  summary: 'Traffic per UTC hour, day or calendar month, summed over nodes; every bucket from..to is present',
  description:
    'to defaults to now, from to 1 day (hour), 30 days (day) or 365 days (month) before to; from is rounded down and to up to the granularity (UTC). At most 31 days at hour granularity, 366 at day, 3,653 (10 years) at month.',
  auth: { scope: 'admin', roles: READERS },
  request: {
    params: IdParam,
    query: z.object({
      from: Instant.optional(),
      to: Instant.optional(),
      granularity: Granularity.default('hour'),
    }),
  },
  responses: { 200: json(SubscriptionUsageSchema, 'Usage series'), 404: { description: 'No such subscription' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getSubscriptionUsage(c.get('deps'), c.req.valid('param').id, c.req.valid('query')), 200));
