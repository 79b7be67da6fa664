import type { OpenAPIHono } from '@hono/zod-openapi';
import { CreatePaymentProviderInput, createPaymentProvider } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, openapi, WRITERS } from '@svc/http';
import { body, json, problem } from '../../schemas.ts';
import { PaymentProviderSchema } from './schemas.ts';

export const CreatePaymentProviderBody = openapi(CreatePaymentProviderInput, 'CreatePaymentProvider');

export const route = defineRoute({
  method: 'post',
  path: '/payment-providers',
  tags: ['payment-providers'],
  summary: 'Create a payment provider; secret settings are sealed and never returned',
  auth: { scope: 'admin', roles: WRITERS },
  request: body(CreatePaymentProviderBody),
  responses: { 201: json(PaymentProviderSchema, 'Created'), 409: problem('Enabled without its required secrets') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await createPaymentProvider(actorContext(c), c.req.valid('json')), 201));
