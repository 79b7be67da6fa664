import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdateDnsProviderInput, updateDnsProvider } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json, problem } from '../../schemas.ts';
import { DnsProviderSchema } from './schemas.ts';

export const UpdateDnsProviderBody = openapi(UpdateDnsProviderInput, 'UpdateDnsProvider');

export const route = defineRoute({
  method: 'patch',
  path: '/dns-providers/{id}',
  tags: ['dns-providers'],
  summary: 'Update a DNS provider (merge; credentials replace the whole set)',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdateDnsProviderBody) },
  responses: { 200: json(DnsProviderSchema, 'Updated'), 404: problem('No such DNS provider') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updateDnsProvider(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));
