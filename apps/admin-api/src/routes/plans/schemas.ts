import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });

export const PlanSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    price: z.number().int(),
    currency: z.string(),
    duration_days: z.number().int(),
    traffic_limit_bytes: z.number().int().nullable(),
    device_limit: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'copied onto subscriptions bought or renewed with the plan; null: no limit' }),
    upload_bps: z.number().int().nullable().openapi({ description: 'upload cap (bit/s) copied onto its subscriptions; null: uncapped' }),
    download_bps: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'download cap (bit/s) copied onto its subscriptions; null: uncapped' }),
    description: z.string().nullable().openapi({ description: "what the plan includes, in the operator's words; null: none" }),
    renewal: z.enum(['no_reset', 'day', 'week', 'month']),
    access_group_ids: z.array(z.string()),
    archived: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Plan');

/** A boolean query parameter: exactly `true` or `false`. */
export const BoolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');
