import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listAccessGroups } from '@svc/domain';
import { type AppEnv, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { AccessGroupSchema } from './schemas.ts';

export const AccessGroupPage = pageOf(AccessGroupSchema, 'AccessGroupPage');

export const route = defineRoute({
  method: 'get',
  path: '/access-groups',
  tags: ['access-groups'],
  summary: 'List access groups, oldest first',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({ ...pageQuery, inbound_id: z.string().max(64).optional().openapi({ description: 'groups containing this inbound' }) }),
  },
  responses: { 200: json(AccessGroupPage, 'A page of access groups') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listAccessGroups(c.get('deps'), c.req.valid('query'))), 200));
