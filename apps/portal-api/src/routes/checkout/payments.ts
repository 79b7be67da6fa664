import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { portalPayment, portalPayments } from '@svc/domain';
import { type AppEnv, defineRoute, IdParam, json, pageOf, pageQuery, problem, signedPage } from '@svc/http';
import { portalContext } from '../portal-context.ts';
import { CheckoutSchema } from './checkout.ts';

export const PortalPaymentSchema = CheckoutSchema.extend({
  id: z.string().openapi({ description: 'the payment id (payment_id)' }),
  paid_at: z.string().nullable().openapi({ format: 'date-time' }),
  status_reason: z.string().nullable().openapi({ description: 'why it ended as it did (failed, expired, canceled, refunded)' }),
  plan_name: z.string().openapi({ description: "the plan's name (what was bought), as it is now" }),
  provider_name: z.string().openapi({ description: "the payment method's name, as it is now" }),
  provider_kind: z.string().openapi({ description: "the payment method's kind: stripe, cryptobot, yookassa, manual" }),
}).openapi('PortalPayment');

export const listRoute = defineRoute({
  method: 'get',
  path: '/payments',
  tags: ['billing'],
  summary: 'Your payments, oldest first: what each bought, its status, and the checkout URL of a pending one',
  auth: { scope: 'client' },
  request: { query: z.object({ ...pageQuery }) },
  responses: { 200: json(pageOf(PortalPaymentSchema, 'PortalPaymentPage'), 'A page of your payments') },
});

export const getRoute = defineRoute({
  method: 'get',
  path: '/payments/{id}',
  tags: ['billing'],
  summary: 'One of your payments (after returning from the payment page: is it confirmed yet?)',
  auth: { scope: 'client' },
  request: { params: IdParam },
  responses: { 200: json(PortalPaymentSchema, 'The payment'), 404: problem('No such payment of yours') },
});

export const register = (app: OpenAPIHono<AppEnv>) => {
  app.openapi(listRoute, async (c) => c.json(signedPage(c, await portalPayments(portalContext(c), c.req.valid('query'))), 200));
  app.openapi(getRoute, async (c) => c.json(await portalPayment(portalContext(c), c.req.valid('param').id), 200));
};
