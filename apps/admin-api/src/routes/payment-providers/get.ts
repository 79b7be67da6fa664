import type { OpenAPIHono } from '@hono/zod-openapi';
import { getPaymentProvider } from '@svc/domain';
import { type AppEnv, defineRoute, READERS } from '@svc/http';
import { IdParam, json, problem } from '../../schemas.ts';
import { PaymentProviderSchema } from './schemas.ts';

export const route = defineRoute({
  method: 'get',
  path: '/payment-providers/{id}',
  tags: ['payment-providers'],
  summary: 'One payment provider (public settings and the names of the secrets set)',
  auth: { scope: 'admin', roles: READERS },
  request: { params: IdParam },
  responses: { 200: json(PaymentProviderSchema, 'The payment provider'), 404: problem('No such payment provider') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getPaymentProvider(c.get('deps'), c.req.valid('param').id), 200));
