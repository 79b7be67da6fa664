import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listImportJobs } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, READERS } from '@svc/http';
import { json } from '../../schemas.ts';
import { ImportJobSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/imports',
  tags: ['imports'],
  summary: 'The latest imports (50), newest first',
  auth: { scope: 'admin', roles: READERS },
  responses: { 200: json(z.object({ items: z.array(ImportJobSchema) }).openapi('ImportJobList'), 'Imports') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json({ items: await listImportJobs(actorContext(c)) }, 200));
