import type { OpenAPIHono } from '@hono/zod-openapi';
import { getBulkJob } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { BulkJobSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/bulk-jobs/{id}',
  tags: ['bulk-jobs'],
  summary: 'One bulk job: its progress (the event stream also tells it, as `bulk_job`)',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(BulkJobSchema, 'The bulk job'), 404: problem('No such bulk job') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getBulkJob(actorContext(c), c.req.valid('param').id), 200));
