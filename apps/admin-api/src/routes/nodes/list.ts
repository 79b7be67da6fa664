import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listNodes, NODE_LIST } from '@svc/domain';
import { type AppEnv, defineRoute, listPageOf, listQuery, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { AdminStatus, Connectivity, NodeSchema } from './schemas.ts';

export const NodePage = listPageOf(NodeSchema, 'NodePage');

export const route = defineRoute({
  method: 'get',
  path: '/nodes',
  tags: ['nodes'],
  summary: 'List nodes, oldest first unless sorted; q searches',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      ...pageQuery,
      ...listQuery(NODE_LIST, 'an id by its start; the name, address or hostname anywhere'),
      admin_status: AdminStatus.optional(),
      connectivity: Connectivity.optional(),
    }),
  },
  responses: { 200: json(NodePage, 'A page of nodes') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listNodes(c.get('deps'), c.req.valid('query'))), 200));
