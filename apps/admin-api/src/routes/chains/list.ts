import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listChains } from '@svc/domain';
import { type AppEnv, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { ChainSchema } from './schemas.ts';

export const ChainPage = pageOf(ChainSchema, 'ChainPage');

export const route = defineRoute({
  method: 'get',
  path: '/chains',
  tags: ['chains'],
  summary: 'List chains, oldest first',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      ...pageQuery,
      node_id: z.string().min(1).max(64).optional().openapi({ description: 'Chains with a hop on this node' }),
    }),
  },
  responses: { 200: json(ChainPage, 'A page of chains') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listChains(c.get('deps'), c.req.valid('query'))), 200));
