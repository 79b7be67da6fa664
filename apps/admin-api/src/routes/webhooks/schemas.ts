import { z } from '@hono/zod-openapi';

export const WebhookSchema = z
  .object({
    id: z.string(),
    url: z.string().openapi({
      description:
        'where deliveries go. Viewers get it as the audit log keeps it: origin and path, a query shown as ?… (receivers often keep a token there); owners and admins get it whole',
    }),
    description: z.string(),
    event_types: z.array(z.string()).nullable().openapi({ description: 'event types delivered; null = every type' }),
    enabled: z.boolean(),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Webhook');

export const WebhookWithSecretSchema = WebhookSchema.extend({
  secret: z.string().openapi({
    description: 'the signing secret (whsec_...): shown in this answer only; signatures are HMAC-SHA256 under it (docs/notifications.md)',
  }),
}).openapi('WebhookWithSecret');

export const WebhookDeliveryStatus = z.enum(['pending', 'succeeded', 'failed']);

export const WebhookDeliverySchema = z
  .object({
    id: z.string(),
    webhook_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    status: WebhookDeliveryStatus,
    attempts: z.number().int(),
    last_response_status: z.number().int().nullable(),
    last_error: z.string().nullable().openapi({
      description:
        "why the last attempt failed (bounded; at most a short excerpt of the answer). Viewers get only 'HTTP <status>', or 'not delivered' when no answer came: never the receiver's words or connection detail",
    }),
    next_attempt_at: z.string().nullable().openapi({ format: 'date-time', description: 'when a pending delivery is tried next' }),
    delivered_at: z.string().nullable().openapi({ format: 'date-time' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('WebhookDelivery');
