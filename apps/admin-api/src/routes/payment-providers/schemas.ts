import { z } from '@hono/zod-openapi';

export const PaymentProviderSchema = z
  .object({
    id: z.string(),
    kind: z.string(),
    name: z.string(),
    enabled: z.boolean(),
    config: z.record(z.string(), z.string()).openapi({ description: 'public settings only' }),
    secrets_set: z.array(z.string()).openapi({ description: 'names of the secret settings that hold a value; values are never returned' }),
    webhook_url: z
      .string()
      .nullable()
      .openapi({ format: 'uri', description: 'set this as the webhook (notification) URL at the provider; null for manual providers' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('PaymentProvider');
