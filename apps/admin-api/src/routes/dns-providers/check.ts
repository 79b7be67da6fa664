import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { CheckDnsProviderInput, checkDnsProvider } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, IdParam, openapi, problem, WRITERS } from '@svc/http';
import { body, json } from '../../schemas.ts';

export const CheckDnsProviderBody = openapi(CheckDnsProviderInput, 'CheckDnsProvider');

export const DnsCheckReportSchema = z
  .object({
    ok: z.boolean().openapi({ description: 'every step succeeded: the provider can answer DNS-01 challenges for this domain' }),
    record: z.string().openapi({ description: 'the test record, _svc-check.<domain>' }),
    steps: z.array(
      z.object({
        step: z.enum(['add', 'visible', 'remove', 'gone']),
        ok: z.boolean(),
        detail: z.string().openapi({ description: 'what happened, or the refusal in words' }),
        ms: z.number().int(),
      }),
    ),
  })
  .openapi('DnsCheckReport');

export const route = defineRoute({
  method: 'post',
  path: '/dns-providers/{id}/check',
  tags: ['dns-providers'],
  summary: 'Create a test TXT record, wait until the authoritative servers show it, remove it: the report of each step',
  description: 'A provider that cannot do it answers 200 with ok false and the failing step; the test record is removed in any case.',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(CheckDnsProviderBody) },
  responses: { 200: json(DnsCheckReportSchema, 'What happened'), 404: problem('No such DNS provider') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await checkDnsProvider(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));
