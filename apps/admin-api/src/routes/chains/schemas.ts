import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });

export const ChainHopSchema = z
  .object({ position: z.number().int().openapi({ description: '0-based order' }), node_id: z.string(), port: z.number().int() })
  .openapi('ChainHop');

export const ChainSchema = z
  .object({
    id: z.string().openapi({ example: 'chn_01jd0000000000000000000000' }),
    name: z.string(),
    hops: z.array(ChainHopSchema),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Chain');
