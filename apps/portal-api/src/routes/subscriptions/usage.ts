import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { Instant, portalSubscriptionUsage } from '@svc/domain';
import { type AppEnv, defineRoute, IdParam, json } from '@svc/http';
import { portalContext } from '../portal-context.ts';

const Granularity = z.enum(['hour', 'day', 'month']);

export const PortalUsageSchema = z
  .object({
    subscription_id: z.string(),
    granularity: Granularity,
    from: z.string().openapi({ format: 'date-time' }),
    to: z.string().openapi({ format: 'date-time' }),
    items: z.array(
      z.object({ start: z.string().openapi({ format: 'date-time' }), uplink_bytes: z.number().int(), downlink_bytes: z.number().int() }),
    ),
  })
  .openapi('PortalSubscriptionUsage');

export const route = defineRoute({
  method: 'get',
  path: '/subscriptions/{id}/usage',
  tags: ['subscriptions'],
  summary: 'Traffic of one of your subscriptions per UTC hour, day or month (the admin series); another client’s id is 404',
  auth: { scope: 'client' },
  request: {
    params: IdParam,
    query: z.object({ from: Instant.optional(), to: Instant.optional(), granularity: Granularity.default('hour') }),
  },
  responses: { 200: json(PortalUsageSchema, 'Usage series'), 404: { description: 'No such subscription of yours' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) =>
    c.json(await portalSubscriptionUsage(portalContext(c), c.req.valid('param').id, c.req.valid('query')), 200),
  );
