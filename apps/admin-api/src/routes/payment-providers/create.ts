import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { createPaymentProvider } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { body, json, problem } from '../../schemas.ts';
import { PaymentProviderSchema, ProviderConfigInput, ProviderKind, ProviderName } from './schemas.ts';

export const CreatePaymentProviderBody = z
  .object({
    kind: ProviderKind,
    name: ProviderName,
    enabled: z.boolean().optional().openapi({ description: 'default false; true needs every required secret' }),
    config: ProviderConfigInput.optional(),
  })
  .strict()
  .openapi('CreatePaymentProvider');

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
