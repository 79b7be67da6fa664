import { z } from 'zod';

const SubscriptionStatus = z.enum(['active', 'limited', 'expired', 'disabled']);
const Instant = z.string().meta({ description: 'ISO 8601 time, UTC' });

/** What every subscription event names: the subscription and its customer. */
const subject = {
  subscription_id: z.string(),
  client_id: z.string(),
};

const traffic = (percent: 80 | 100) =>
  z
    .object({
      ...subject,
      used_bytes: z.number().int().meta({ description: 'charged bytes in the current period' }),
      traffic_limit_bytes: z.number().int(),
      /** The period this happened in ends then (null: the limit never resets). */
      resets_at: Instant.nullable(),
    })
    .meta({
      description:
        percent === 80
          ? "A usage report brought the subscription's charged traffic to 80% of its limit in this period (once per period and limit: a reset or a raised limit arms it again). A warning to pass on to the customer."
          : "A usage report brought the subscription's charged traffic to its limit in this period (once per period and limit). The subscription becomes limited at once (subscription.limited follows when the status is written).",
    });

/** Subscriptions (docs/events.md, "Subscriptions"). */
export const SUBSCRIPTION_EVENTS = {
  'subscription.created': z
    .object({
      ...subject,
      status: SubscriptionStatus,
      expires_at: Instant.nullable(),
      traffic_limit_bytes: z.number().int().nullable(),
      renewal: z.enum(['no_reset', 'day', 'week', 'month']),
      access_group_ids: z.array(z.string()),
    })
    .meta({
      description:
        'A subscription was created: by an admin or by a payment for a new one (an import from another panel raises none: the users exist already).',
    }),
  'subscription.updated': z
    .object({
      ...subject,
      /** The fields the change named (renewal, traffic_limit_bytes, status, expires_at, access_group_ids, note, used_bytes). */
      changed: z.array(z.string()),
      status: SubscriptionStatus,
      /** The bulk job that made the change, null for a single edit. */
      bulk_job_id: z.string().nullable(),
    })
    .meta({
      description:
        'An admin changed a subscription (PATCH, a usage reset, or a bulk action). What its status did is told by its own events (disabled, enabled, limited, expired); a longer term by subscription.renewed.',
    }),
  'subscription.limited': z.object({ ...subject, used_bytes: z.number().int(), traffic_limit_bytes: z.number().int() }).meta({
    description:
      'The subscription became limited: its charged traffic reached its limit. Its users leave the nodes; its link shows the limit.',
  }),
  'subscription.expired': z
    .object({ ...subject, expires_at: Instant.nullable() })
    .meta({ description: 'The subscription became expired: its term ended (or an admin ended it, or a refund took its time back).' }),
  'subscription.renewed': z
    .object({
      ...subject,
      previous_expires_at: Instant.nullable(),
      expires_at: Instant.nullable(),
      /** The plan a payment applied; null for an admin's extension. */
      plan_id: z.string().nullable(),
      status: SubscriptionStatus,
    })
    .meta({
      description:
        'The subscription got a longer term: a payment applied its plan, or an admin extended the expiry (alone or in bulk), or removed it.',
    }),
  'subscription.disabled': z
    .object({ ...subject, previous_status: SubscriptionStatus })
    .meta({ description: 'An admin disabled the subscription: its users leave the nodes until it is enabled.' }),
  'subscription.enabled': z.object({ ...subject, status: SubscriptionStatus }).meta({
    description: 'An admin enabled a disabled subscription; `status` is what it is now (active, or limited/expired if that holds).',
  }),
  'subscription.deleted': z
    .object({ ...subject, status: SubscriptionStatus })
    .meta({ description: 'The subscription was deleted (alone, in bulk, or with its client); its link stops resolving.' }),
  'subscription.credentials_rotated': z.object({ ...subject }).meta({
    description:
      'New proxy credentials and link token: the old link (and an imported panel link) stopped resolving; the customer needs the new one.',
  }),
  'subscription.traffic_80_percent': traffic(80),
  'subscription.traffic_100_percent': traffic(100),
  'subscription.cut_off_by_node': z
    .object({
      ...subject,
      node_id: z.string(),
      reason: z.enum(['time', 'slice']).meta({
        description: 'time: its not-after time passed on the node; slice: it used up the traffic slice the node had for it',
      }),
      cut_at: Instant.meta({ description: "control-plane time of the cut as the node's agent estimated it" }),
      slice_id: z.number().int().meta({ description: 'the traffic slice in force when it was cut (0: none)' }),
      slice_used_bytes: z.number().int().meta({ description: 'raw bytes the node counted against that slice' }),
    })
    .meta({
      description:
        "A node's agent cut the subscription's users on its own (docs/limits.md), reported once when the node reaches the control plane: its time ran out, or the traffic slice the node held for it was used up. A slice cut with traffic left gets a new slice, and the node serves it again.",
    }),
} as const;
