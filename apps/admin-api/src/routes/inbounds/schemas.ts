import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });

export const InboundSchema = z
  .object({
    id: z.string(),
    node_id: z.string(),
    profile_id: z.string(),
    tag: z.string().openapi({ description: 'generated, `<protocol>-<port>`, unique per node' }),
    port: z.number().int(),
    listen: z.string().nullable(),
    host: z.string().nullable(),
    chain_id: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Inbound');
