import { z } from '@hono/zod-openapi';
import { SubscriptionRenewal } from '@svc/domain';

export const SubscriptionStatus = z.enum(['active', 'limited', 'expired', 'disabled']);

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
    device_limit: z.number().int().nullable().openapi({
      description: 'distinct client addresses (IPv6 folded to /64) on live connections at once, enforced by the nodes; null: no limit',
    }),
    upload_bps: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'upload cap in bits per second, enforced by the nodes; null: uncapped' }),
    download_bps: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'download cap in bits per second, enforced by the nodes; null: uncapped' }),
    used_bytes: z.number().int().openapi({ description: 'traffic in the current renewal period' }),
    expires_at: z.string().nullable().openapi({ format: 'date-time' }),
    starts_on_first_use: z
      .object({
        term_seconds: z.number().int().openapi({ description: 'the term that starts with the first traffic: expires_at = then + term' }),
        start_by: z
          .string()
          .nullable()
          .openapi({ format: 'date-time', description: 'the term starts then at the latest; null: only on use' }),
      })
      .nullable()
      .openapi({ description: 'a term waiting for its first use (an import of an on-hold user); expires_at is null meanwhile' }),
    renewal: SubscriptionRenewal,
    period_started_at: z.string().openapi({ format: 'date-time' }),
    link: z.string().nullable().openapi({
      format: 'uri',
      description:
        '{public_base_url}/sub/{token}; changes when credentials are rotated. null for viewers: the link is full proxy access; they see that it exists and what it serves through status and credentials_rotated_at',
    }),
    credentials_rotated_at: z.string().nullable().openapi({ format: 'date-time' }),
    note: z.string().nullable(),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Subscription');
