import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listBulkJobs } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, READERS } from '@svc/http';
import { json } from '../../schemas.ts';
import { BulkJobSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/bulk-jobs',
  tags: ['bulk-jobs'],
  summary: 'The latest 50 bulk jobs, newest first',
  auth: { scope: 'admin', roles: READERS },
  responses: { 200: json(z.object({ items: z.array(BulkJobSchema) }).openapi('BulkJobList'), 'Bulk jobs') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json({ items: await listBulkJobs(actorContext(c)) }, 200));
