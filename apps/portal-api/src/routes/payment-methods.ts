import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { portalPaymentMethods } from '@svc/domain';
import { type AppEnv, defineRoute, json } from '@svc/http';

export const PaymentMethodSchema = z.object({ id: z.string(), kind: z.string(), name: z.string() }).openapi('PortalPaymentMethod');

export const route = defineRoute({
  method: 'get',
  path: '/payment-methods',
  tags: ['billing'],
  summary: 'Enabled payment providers (no settings)',
  auth: { scope: 'client' },
  responses: { 200: json(z.object({ items: z.array(PaymentMethodSchema) }).openapi('PortalPaymentMethods'), 'Payment methods') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json({ items: await portalPaymentMethods(c.get('deps')) }, 200));
