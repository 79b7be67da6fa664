import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });

export const Port = z.number().int().min(1).max(65535);
export const Listen = z.string().max(64).openapi({ description: 'IP literal to listen on; default all addresses', example: '0.0.0.0' });
export const Host = z.string().max(253).openapi({ description: 'host clients connect to; overrides the node address in client links' });
export const RefId = z.string().min(1).max(64);

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
