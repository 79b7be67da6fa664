import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { CheckoutInput, startCheckout } from '@svc/domain';
import { type AppEnv, body, defineRoute, json, openapi, problem } from '@svc/http';
import { portalContext } from '../portal-context.ts';

export const CheckoutBody = openapi(CheckoutInput, 'CheckoutRequest');

const Timestamp = z.string().openapi({ format: 'date-time' });

export const CheckoutSchema = z
  .object({
    payment_id: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed', 'expired', 'canceled', 'refunded']),
    plan_id: z.string(),
    provider_id: z.string(),
    subscription_id: z
      .string()
      .nullable()
      .openapi({ description: 'the subscription to extend; null: a new one when the payment succeeds' }),
    amount: z.number().int().openapi({ description: 'minor units of currency (cents)' }),
    currency: z.string(),
    checkout_url: z.string().nullable().openapi({ format: 'uri', description: "the provider's payment page; null for a manual provider" }),
    instructions: z.string().nullable().openapi({ description: 'what to do to pay (manual providers)' }),
    expires_at: Timestamp.nullable().openapi({
      description:
        'when the payment stops being waited for: the provider’s expiry when it names one; for a manual provider, the deadline to pay by (it expires unconfirmed after it)',
    }),
    created_at: Timestamp,
  })
  .openapi('Checkout');

export const route = defineRoute({
  method: 'post',
  path: '/checkout',
  tags: ['billing'],
  summary: 'Start paying for a plan: a new subscription, or more time for one of yours (Idempotency-Key required)',
  description:
    'Send a fresh Idempotency-Key (a UUID) per purchase and the same key when retrying it: the same key with the same body answers the same checkout (header Idempotent-Replayed: true), even when two requests race; the same key with another body is 422. The subscription is created or extended when the provider reports the payment.',
  auth: { scope: 'client' },
  request: {
    headers: z.object({
      'idempotency-key': z.string().optional().openapi({ description: 'Required: 1-255 printable ASCII characters, one per purchase' }),
    }),
    ...body(CheckoutBody),
  },
  responses: {
    201: json(CheckoutSchema, 'The checkout: go to checkout_url (or follow instructions)'),
    400: problem('No Idempotency-Key, or an invalid body (plan not on sale, payment method not enabled, not your subscription)'),
    422: problem('The Idempotency-Key was used with another body'),
    502: problem("The payment provider answered with another payment's checkout: nothing was stored; retry with the same key later"),
    503: problem('The payment provider cannot be reached; retry with the same key'),
  },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const key = c.req.header('idempotency-key') ?? '';
    const { checkout, replayed } = await startCheckout(portalContext(c), key, c.req.valid('json'));
    if (replayed) c.header('Idempotent-Replayed', 'true');
    return c.json(checkout, 201);
  });
