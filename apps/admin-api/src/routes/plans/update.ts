import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdatePlanInput, updatePlan } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json, problem } from '../../schemas.ts';
import { PlanSchema } from './schemas.ts';

export const UpdatePlanBody = openapi(UpdatePlanInput, 'UpdatePlan');

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
