import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listInbounds } from '@svc/domain';
import { type AppEnv, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { InboundSchema } from './schemas.ts';

export const InboundPage = pageOf(InboundSchema, 'InboundPage');

export const route = defineRoute({
  method: 'get',
  path: '/inbounds',
  tags: ['inbounds'],
  summary: 'List inbounds, oldest first',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      ...pageQuery,
      node_id: z.string().max(64).optional().openapi({ description: 'inbounds of a node' }),
      profile_id: z.string().max(64).optional().openapi({ description: 'all bindings of a profile' }),
      chain_id: z.string().max(64).optional().openapi({ description: 'inbounds routed through a chain' }),
    }),
  },
  responses: { 200: json(InboundPage, 'A page of inbounds') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listInbounds(c.get('deps'), c.req.valid('query'))), 200));
