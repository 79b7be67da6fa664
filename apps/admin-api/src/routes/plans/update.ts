import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { updatePlan } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, IdParam, json, problem } from '../../schemas.ts';
import { AccessGroupIds, Currency, DurationDays, PlanName, PlanSchema, Price, TrafficLimit } from './schemas.ts';

export const UpdatePlanBody = z
  .object({
    name: PlanName.optional(),
    price: Price.optional(),
    currency: Currency.optional(),
    duration_days: DurationDays.optional(),
    traffic_limit_bytes: TrafficLimit.optional(),
    access_group_ids: AccessGroupIds.optional().openapi({ description: 'replaces the whole list' }),
    archived: z.boolean().optional(),
  })
  .strict()
  .openapi('UpdatePlan');

export const route = defineRoute({
  method: 'patch',
  path: '/plans/{id}',
  tags: ['plans'],
  summary: 'Update a plan (merge; access_group_ids replaces the list)',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdatePlanBody) },
  responses: { 200: json(PlanSchema, 'Updated'), 404: problem('No such plan') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updatePlan(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));
