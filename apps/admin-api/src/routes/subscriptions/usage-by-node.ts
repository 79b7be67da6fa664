import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { getSubscriptionUsageByNode, Instant } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';

const DAY_MS = 86_400_000;

export const SubscriptionNodeUsageSchema = z
  .object({
    subscription_id: z.string(),
    from: z.string().openapi({ format: 'date-time' }),
    to: z.string().openapi({ format: 'date-time' }),
    items: z.array(
      z.object({
        node_id: z.string(),
        node_name: z.string(),
        uplink_bytes: z.number().int().openapi({ description: 'Charged: what the node reported times its traffic_multiplier then' }),
        downlink_bytes: z.number().int().openapi({ description: 'Charged: what the node reported times its traffic_multiplier then' }),
        raw_uplink_bytes: z.number().int().openapi({ description: 'What the node reported (carried)' }),
        raw_downlink_bytes: z.number().int().openapi({ description: 'What the node reported (carried)' }),
      }),
    ),
  })
  .openapi('SubscriptionNodeUsage');

export const route = defineRoute({
  method: 'get',
  path: '/subscriptions/{id}/usage/nodes',
  tags: ['subscriptions'],
  summary: 'Traffic of the subscription per node in a range (who used which node), charged and raw; nodes it did not use are left out',
  description: 'to defaults to now, from to 30 days before to. Counted by UTC hour: from and to fall on the hours that hold them.',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam, query: z.object({ from: Instant.optional(), to: Instant.optional() }) },
  responses: { 200: json(SubscriptionNodeUsageSchema, 'Usage per node'), 404: problem('No such subscription') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { id } = c.req.valid('param');
    const q = c.req.valid('query');
    const to = q.to ?? c.get('deps').clock.now();
    const from = q.from ?? new Date(to.getTime() - 30 * DAY_MS);
    const items = await getSubscriptionUsageByNode(c.get('deps'), id, from, to);
    return c.json({ subscription_id: id, from: from.toISOString(), to: to.toISOString(), items }, 200);
  });
