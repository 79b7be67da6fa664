import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listPaymentProviders, PaymentProviderKindField } from '@svc/domain';
import { type AppEnv, defineRoute, pageOf, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { BoolQuery } from '../plans/schemas.ts';
import { PaymentProviderSchema } from './schemas.ts';

export const PaymentProviderPage = pageOf(PaymentProviderSchema, 'PaymentProviderPage');

export const route = defineRoute({
  method: 'get',
  path: '/payment-providers',
  tags: ['payment-providers'],
  summary: 'List payment providers, oldest first',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      ...pageQuery,
      kind: PaymentProviderKindField.optional(),
      enabled: BoolQuery.optional().openapi({ type: 'string', enum: ['true', 'false'] }),
    }),
  },
  responses: { 200: json(PaymentProviderPage, 'A page of payment providers') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listPaymentProviders(c.get('deps'), c.req.valid('query'))), 200));
