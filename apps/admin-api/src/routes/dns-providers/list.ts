import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { DnsKind, listDnsProviders } from '@svc/domain';
import { type AppEnv, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { DnsProviderSchema } from './schemas.ts';

export const DnsProviderPage = pageOf(DnsProviderSchema, 'DnsProviderPage');

export const route = defineRoute({
  method: 'get',
  path: '/dns-providers',
  tags: ['dns-providers'],
  summary: 'List DNS providers, oldest first',
  auth: { scope: 'admin', roles: READERS },
  request: { query: z.object({ ...pageQuery, kind: DnsKind.optional() }) },
  responses: { 200: json(DnsProviderPage, 'A page of DNS providers') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listDnsProviders(c.get('deps'), c.req.valid('query'))), 200));
