import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });

export const ChainName = z.string().trim().min(1).max(64).openapi({ example: 'fra-to-ams' });

export const ChainHopInput = z
  .object({
    node_id: z.string().min(1).max(64),
    port: z.number().int().min(1).max(65535).openapi({ description: "Where this hop's chain-in listens on its node" }),
  })
  .strict()
  .openapi('ChainHopInput');

export const ChainHopsInput = z.array(ChainHopInput).min(2).max(16).openapi({
  description: 'Ordered: traffic enters at the first hop (where inbounds routed through the chain live). Each node at most once.',
});

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
