import { z } from '@hono/zod-openapi';

export const PaymentStatus = z.enum(['pending', 'succeeded', 'failed', 'expired', 'canceled', 'refunded']);

export const PaymentSchema = z
  .object({
    id: z.string(),
    client_id: z.string(),
    client_email: z.string().openapi({ description: "the client's email as it is now" }),
    plan_id: z.string(),
    provider_id: z.string(),
    subscription_id: z.string().nullable(),
    amount: z.number().int().openapi({ description: 'in minor units of the currency' }),
    currency: z.string(),
    status: PaymentStatus,
    provider_payment_id: z.string().nullable(),
    status_reason: z.string().nullable().openapi({ description: 'why the status is what it is, in words' }),
    expires_at: z.string().nullable().openapi({
      format: 'date-time',
      description:
        'when the payment stops being waited for: the provider’s expiry when it named one; a manual payment’s deadline (billing.manual_max_days after the checkout), after which it expires unconfirmed',
    }),
    paid_at: z.string().nullable().openapi({ format: 'date-time' }),
    applied_at: z.string().nullable().openapi({ format: 'date-time', description: 'when the plan was applied to the subscription' }),
    reverted_at: z.string().nullable().openapi({ format: 'date-time', description: 'when a refund took the bought time back' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Payment');
