import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });

export const PlanName = z.string().trim().min(1).max(100);
export const Price = z
  .number()
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .openapi({ description: 'in minor units of the currency (cents)', example: 990 });
export const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code in upper case (EUR)')
  .openapi({ description: 'ISO 4217, upper case', example: 'EUR' });
export const DurationDays = z.number().int().min(1).max(36_500);
export const TrafficLimit = z
  .number()
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .nullable()
  .openapi({ description: 'bytes per period; null: unlimited' });
export const AccessGroupIds = z
  .array(z.string().min(1).max(64))
  .max(1000)
  .openapi({ description: 'access groups granted by the plan; each must exist' });

export const PlanSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    price: z.number().int(),
    currency: z.string(),
    duration_days: z.number().int(),
    traffic_limit_bytes: z.number().int().nullable(),
    access_group_ids: z.array(z.string()),
    archived: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Plan');

/** A boolean query parameter: exactly `true` or `false`. */
export const BoolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');
