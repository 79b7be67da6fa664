import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { listPayments, PAYMENT_LIST } from '@svc/domain';
import { type AppEnv, defineRoute, listPageOf, listQuery, pageQuery, READERS, signedPage } from '@svc/http';
import { json } from '../../schemas.ts';
import { PaymentSchema, PaymentStatus } from './schemas.ts';

export const PaymentPage = listPageOf(PaymentSchema, 'PaymentPage');

const Id = z.string().min(1).max(64);
const Instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

export const route = defineRoute({
  method: 'get',
  path: '/payments',
  tags: ['payments'],
  summary:
    'List payments, oldest first unless sorted; q searches; filters client_id, status, provider_id, subscription_id, plan_id, from, to (created_at)',
  auth: { scope: 'admin', roles: READERS },
  request: {
    query: z.object({
      ...pageQuery,
      ...listQuery(
        PAYMENT_LIST,
        "a payment id or the client's email by its start, the provider's payment id exactly; from 3 characters, anywhere in the email",
      ),
      client_id: Id.optional(),
      status: PaymentStatus.optional(),
      provider_id: Id.optional(),
      subscription_id: Id.optional(),
      plan_id: Id.optional(),
      from: Instant.optional().openapi({ type: 'string', format: 'date-time', description: 'created at or after' }),
      to: Instant.optional().openapi({ type: 'string', format: 'date-time', description: 'created before' }),
    }),
  },
  responses: { 200: json(PaymentPage, 'A page of payments') },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(signedPage(c, await listPayments(c.get('deps'), c.req.valid('query'))), 200));
