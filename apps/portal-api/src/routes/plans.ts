import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { portalPlans } from '@svc/domain';
import { type AppEnv, defineRoute, json, pageOf, pageQuery, signedPage } from '@svc/http';

export const PortalPlanSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    price: z.number().int().openapi({ description: 'minor units of currency (cents)' }),
    currency: z.string(),
    duration_days: z.number().int(),
    traffic_limit_bytes: z.number().int().nullable().openapi({ description: 'null: unlimited' }),
    description: z.string().nullable().openapi({ description: "what the plan includes, in the operator's words (plain text); null: none" }),
    renewal: z.enum(['no_reset', 'day', 'week', 'month']).openapi({ description: 'when the traffic starts over' }),
  })
  .openapi('PortalPlan');

export const route = defineRoute({
  method: 'get',
  path: '/plans',
  tags: ['billing'],
  summary: 'Plans on sale (non-archived), a page at a time, oldest first',
  auth: { scope: 'client' },
  request: { query: z.object({ ...pageQuery }) },
  responses: { 200: json(pageOf(PortalPlanSchema, 'PortalPlanPage'), 'A page of plans') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await portalPlans(c.get('deps'), c.req.valid('query'))), 200));
