import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { portalPaymentMethods } from '@svc/domain';
import { type AppEnv, defineRoute, json, pageOf, pageQuery, signedPage } from '@svc/http';

export const PaymentMethodSchema = z.object({ id: z.string(), kind: z.string(), name: z.string() }).openapi('PortalPaymentMethod');

export const route = defineRoute({
  method: 'get',
  path: '/payment-methods',
  tags: ['billing'],
  summary: 'Enabled payment providers (no settings), a page at a time, oldest first',
  auth: { scope: 'client' },
  request: { query: z.object({ ...pageQuery }) },
  responses: { 200: json(pageOf(PaymentMethodSchema, 'PortalPaymentMethodPage'), 'A page of payment methods') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await portalPaymentMethods(c.get('deps'), c.req.valid('query'))), 200));
