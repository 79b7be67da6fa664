import { z } from '@hono/zod-openapi';

export const AccessGroupSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    inbound_ids: z.array(z.string()).openapi({ description: 'sorted by id' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AccessGroup');
