import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { createPlan } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { AccessGroupIds, Currency, DurationDays, PlanName, PlanSchema, Price, TrafficLimit } from './schemas.ts';

export const CreatePlanBody = z
  .object({
    name: PlanName,
    price: Price,
    currency: Currency,
    duration_days: DurationDays,
    traffic_limit_bytes: TrafficLimit.optional(),
    access_group_ids: AccessGroupIds.optional(),
    archived: z.boolean().optional().openapi({ description: 'default false' }),
  })
  .strict()
  .openapi('CreatePlan');

export const route = defineRoute({
  method: 'post',
  path: '/plans',
  tags: ['plans'],
  summary: 'Create a plan (changes no node configuration)',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreatePlanBody),
  responses: { 201: json(PlanSchema, 'Created') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createPlan(actorContext(c), c.req.valid('json')), 201));
