import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listInboundProfiles } from '@svc/domain';
import { type AppEnv, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { InboundProfileSchema, Protocol } from './schemas.ts';

export const InboundProfilePage = pageOf(InboundProfileSchema, 'InboundProfilePage');

export const route = defineRoute({
  method: 'get',
  path: '/inbound-profiles',
  tags: ['inbound-profiles'],
  summary: 'List inbound profiles, oldest first',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      ...pageQuery,
      protocol: Protocol.optional(),
      certificate_id: z.string().max(64).optional().openapi({ description: 'profiles serving TLS with this certificate' }),
    }),
  },
  responses: { 200: json(InboundProfilePage, 'A page of inbound profiles') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listInboundProfiles(c.get('deps'), c.req.valid('query'))), 200));
