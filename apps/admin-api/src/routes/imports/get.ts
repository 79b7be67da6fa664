import type { OpenAPIHono } from '@hono/zod-openapi';
import { getImportJob } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { ImportJobSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/imports/{id}',
  tags: ['imports'],
  summary: 'One import: its progress, and its report or error when it ended',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(ImportJobSchema, 'The import'), 404: problem('No such import') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getImportJob(actorContext(c), c.req.valid('param').id), 200));
