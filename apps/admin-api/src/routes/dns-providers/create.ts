import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreateDnsProviderInput, createDnsProvider } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';
import { DnsProviderSchema } from './schemas.ts';

export const CreateDnsProviderBody = openapi(CreateDnsProviderInput, 'CreateDnsProvider');

export const route = defineRoute({
  method: 'post',
  path: '/dns-providers',
  tags: ['dns-providers'],
  summary: 'Create a DNS provider for DNS-01 challenges; credentials are sealed and never returned',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreateDnsProviderBody),
  responses: { 201: json(DnsProviderSchema, 'Created') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createDnsProvider(actorContext(c), c.req.valid('json')), 201));
