import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listPlans } from '@svc/domain';
import { type AppEnv, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { BoolQuery, PlanSchema } from './schemas.ts';

export const PlanPage = pageOf(PlanSchema, 'PlanPage');

export const route = defineRoute({
  method: 'get',
  path: '/plans',
  tags: ['plans'],
  summary: 'List plans, oldest first',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      ...pageQuery,
      archived: BoolQuery.optional().openapi({ type: 'string', enum: ['true', 'false'], description: 'only archived or only on sale' }),
    }),
  },
  responses: { 200: json(PlanPage, 'A page of plans') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listPlans(c.get('deps'), c.req.valid('query'))), 200));
