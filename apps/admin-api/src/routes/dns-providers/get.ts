import type { OpenAPIHono } from '@hono/zod-openapi';
import { getDnsProvider } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { DnsProviderSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/dns-providers/{id}',
  tags: ['dns-providers'],
  summary: 'One DNS provider (credential names only)',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(DnsProviderSchema, 'The DNS provider'), 404: problem('No such DNS provider') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getDnsProvider(c.get('deps'), c.req.valid('param').id), 200));
