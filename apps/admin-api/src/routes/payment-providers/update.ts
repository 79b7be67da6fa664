import type { OpenAPIHono } from '@hono/zod-openapi';
import { UpdatePaymentProviderInput, updatePaymentProvider } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, IdParam, json, problem } from '../../schemas.ts';
import { PaymentProviderSchema } from './schemas.ts';

export const UpdatePaymentProviderBody = openapi(UpdatePaymentProviderInput, 'UpdatePaymentProvider');

export const route = defineRoute({
  method: 'patch',
  path: '/payment-providers/{id}',
  tags: ['payment-providers'],
  summary: 'Update a payment provider (merge; config merges field by field)',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam, ...body(UpdatePaymentProviderBody) },
  responses: {
    200: json(PaymentProviderSchema, 'Updated'),
    404: problem('No such payment provider'),
    409: problem('Enabled without its required secrets (missing_secrets names them)'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await updatePaymentProvider(actorContext(c), c.req.valid('param').id, c.req.valid('json')), 200));
