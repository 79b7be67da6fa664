import type { OpenAPIHono } from '@hono/zod-openapi';
import { getPlan } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { PlanSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/plans/{id}',
  tags: ['plans'],
  summary: 'One plan',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(PlanSchema, 'The plan'), 404: problem('No such plan') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getPlan(c.get('deps'), c.req.valid('param').id), 200));
