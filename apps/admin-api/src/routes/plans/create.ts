import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreatePlanInput, createPlan } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { PlanSchema } from './schemas.ts';

export const CreatePlanBody = openapi(CreatePlanInput, 'CreatePlan');

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
