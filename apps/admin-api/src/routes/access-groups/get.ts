import type { OpenAPIHono } from '@hono/zod-openapi';
import { getAccessGroup } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { AccessGroupSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/access-groups/{id}',
  tags: ['access-groups'],
  summary: 'One access group',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(AccessGroupSchema, 'The access group'), 404: problem('No such access group') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getAccessGroup(c.get('deps'), c.req.valid('param').id), 200));
