import { z } from '@hono/zod-openapi';

export const DnsProviderSchema = z
  .object({
    id: z.string(),
    kind: z.string(),
    name: z.string(),
    credentials_set: z.array(z.string()).openapi({ description: 'names of the stored credentials; values are never returned' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('DnsProvider');
