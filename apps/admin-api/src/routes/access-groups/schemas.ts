import { z } from '@hono/zod-openapi';

export const GroupName = z.string().trim().min(1).max(100);
export const InboundIds = z
  .array(z.string().min(1).max(64))
  .max(1000)
  .openapi({ description: 'existing inbounds; duplicates are dropped' });

export const AccessGroupSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    inbound_ids: z.array(z.string()).openapi({ description: 'sorted by id' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AccessGroup');
