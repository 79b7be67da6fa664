import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });

export const PortalClientSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    status: z.enum(['pending', 'active', 'rejected', 'disabled']),
    email_verified_at: Timestamp.nullable(),
    has_password: z.boolean(),
    created_at: Timestamp,
  })
  .openapi('PortalClient');

export const PortalSubscriptionSchema = z
  .object({
    id: z.string(),
    status: z.enum(['active', 'limited', 'expired', 'disabled']).openapi({ description: 'as of now' }),
    used_bytes: z.number().int().openapi({ description: 'traffic of the current renewal period' }),
    uplink_bytes: z.number().int(),
    downlink_bytes: z.number().int(),
    traffic_limit_bytes: z.number().int().nullable().openapi({ description: 'null: unlimited' }),
    expires_at: Timestamp.nullable().openapi({ description: 'null: never' }),
    renewal: z.enum(['no_reset', 'day', 'week', 'month']),
    period_started_at: Timestamp,
    next_reset_at: Timestamp.nullable().openapi({
      description: 'When the traffic count starts again (the next renewal period, UTC); null: renewal no_reset',
    }),
    plan_id: z.string().nullable(),
    credentials_rotated_at: Timestamp.nullable(),
    created_at: Timestamp,
  })
  .openapi('PortalSubscription');

export const MeSchema = z.object({ client: PortalClientSchema, subscriptions: z.array(PortalSubscriptionSchema) }).openapi('PortalMe');

export const LinkSchema = z
  .object({ url: z.string().openapi({ format: 'uri', description: '{public_base_url}/sub/{token}: add it to a client app' }) })
  .openapi('PortalSubscriptionLink');
