import { z } from '@hono/zod-openapi';

export const PaymentStatus = z.enum(['pending', 'succeeded', 'failed', 'canceled', 'refunded']);

export const PaymentSchema = z
  .object({
    id: z.string(),
    client_id: z.string(),
    plan_id: z.string(),
    provider_id: z.string(),
    subscription_id: z.string().nullable(),
    amount: z.number().int().openapi({ description: 'in minor units of the currency' }),
    currency: z.string(),
    status: PaymentStatus,
    provider_payment_id: z.string().nullable(),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Payment');
