import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { updateDnsProvider } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, IdParam, json, problem } from '../../schemas.ts';
import { DnsCredentials, DnsName, DnsProviderSchema } from './schemas.ts';

export const UpdateDnsProviderBody = z
  .object({
    name: DnsName.optional(),
    credentials: DnsCredentials.optional().openapi({ description: 'replaces the whole set (checked against the kind)' }),
  })
  .strict()
  .openapi('UpdateDnsProvider');

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
