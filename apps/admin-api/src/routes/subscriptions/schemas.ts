import { z } from '@hono/zod-openapi';

export const SubscriptionStatus = z.enum(['active', 'limited', 'expired', 'disabled']);
export const Renewal = z.enum(['no_reset', 'day', 'week', 'month']);
export const TrafficLimit = z
  .number()
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .nullable()
  .openapi({ description: 'bytes per renewal period; null is unlimited' });
/** RFC 3339 with a zone, parsed to a Date. */
export const Instant = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .openapi({ type: 'string', format: 'date-time' });
export const AccessGroupIds = z.array(z.string().min(1).max(64)).max(100);
export const Note = z.string().max(2000).nullable().openapi({ description: 'free text for admins' });

export const SubscriptionSchema = z
  .object({
    id: z.string(),
    client_id: z.string(),
    status: SubscriptionStatus.openapi({
      description:
        'disabled (by an admin), else expired (expires_at passed), else limited (used_bytes >= limit), else active; computed at read time',
    }),
    access_group_ids: z.array(z.string()),
    traffic_limit_bytes: z.number().int().nullable(),
    used_bytes: z.number().int().openapi({ description: 'traffic in the current renewal period' }),
    expires_at: z.string().nullable().openapi({ format: 'date-time' }),
    renewal: Renewal,
    period_started_at: z.string().openapi({ format: 'date-time' }),
    link: z.string().openapi({ format: 'uri', description: '{public_base_url}/sub/{token}; changes when credentials are rotated' }),
    credentials_rotated_at: z.string().nullable().openapi({ format: 'date-time' }),
    note: z.string().nullable(),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Subscription');
