import { z } from 'zod';

/** Payments (docs/events.md, "Payments"; docs/payments.md). */
export const PAYMENT_EVENTS = {
  'payment.awaiting_confirmation': z
    .object({
      payment_id: z.string(),
      client_id: z.string(),
      client_email: z.string(),
      plan_id: z.string(),
      plan_name: z.string(),
      provider_id: z.string(),
      provider_name: z.string(),
      /** The subscription it extends; null: a new one when confirmed. */
      subscription_id: z.string().nullable(),
      amount: z.number().int(),
      currency: z.string(),
      expires_at: z.string(),
    })
    .meta({
      description:
        'A customer checked out through a manual provider (bank transfer, cash): only an admin can confirm it (or cancel it), before expires_at, when it expires unconfirmed.',
    }),
  'payment.succeeded': z
    .object({
      payment_id: z.string(),
      client_id: z.string(),
      plan_id: z.string(),
      provider_id: z.string(),
      subscription_id: z.string().nullable(),
      amount: z.number().int(),
      currency: z.string(),
    })
    .meta({ description: 'A payment succeeded and its plan was applied (a subscription created or extended).' }),
  'payment.refunded': z
    .object({
      payment_id: z.string(),
      client_id: z.string(),
      subscription_id: z.string().nullable(),
      amount: z.number().int(),
      currency: z.string(),
    })
    .meta({ description: 'A payment was refunded; the time it bought was taken back (docs/payments.md, "Refunds").' }),
} as const;
