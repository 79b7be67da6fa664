import { z } from 'zod';
import { RefId } from '../shared/fields.ts';
import { AdminSubscriptionStatus, SubscriptionAccessGroupIds, TrafficLimitBytes } from '../subscriptions/subscription-fields.ts';

/** The most items one bulk job takes (ids given, or what a filter selects): narrow a larger filter, or run several jobs. */
export const BULK_MAX_ITEMS = 200_000;
/** The most ids one request names (20,000 ids fit in the 1 MiB body limit); more: select them by a filter. */
export const BULK_MAX_IDS = 20_000;
/** How many subjects a dry run shows. */
export const BULK_SAMPLE = 5;

const SubscriptionStatusNow = z.enum(['active', 'limited', 'expired', 'disabled']);
const ClientStatus = z.enum(['pending', 'active', 'rejected', 'disabled']);
const Q = z.string().max(200);

/** What a subscription bulk job does to each subscription it takes (docs/integrations.md, "Bulk actions"). */
export const SubscriptionBulkAction = z.discriminatedUnion('type', [
  z
    .object({ type: z.literal('extend_expiry'), days: z.number().int().min(1).max(3650) })
    .strict()
    .meta({ description: 'the expiry moves on by `days` from the later of now and the current expiry; one that never expires stays so' }),
  z
    .object({ type: z.literal('add_traffic'), bytes: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) })
    .strict()
    .meta({ description: 'the traffic limit grows by `bytes`; an unlimited one stays unlimited' }),
  z
    .object({ type: z.literal('set_traffic'), traffic_limit_bytes: TrafficLimitBytes.nullable() })
    .strict()
    .meta({ description: 'the traffic limit becomes this (null: unlimited)' }),
  z
    .object({ type: z.literal('reset_usage') })
    .strict()
    .meta({ description: "this period's traffic starts again from 0" }),
  z
    .object({ type: z.literal('set_status'), status: AdminSubscriptionStatus })
    .strict()
    .meta({ description: 'the admin switch' }),
  z
    .object({ type: z.literal('set_access_groups'), access_group_ids: SubscriptionAccessGroupIds })
    .strict()
    .meta({ description: 'replaces each subscription’s access groups' }),
  z
    .object({ type: z.literal('rotate_credentials') })
    .strict()
    .meta({ description: 'new credentials and link token for each' }),
  z.object({ type: z.literal('delete') }).strict(),
]);
export type SubscriptionBulkAction = z.output<typeof SubscriptionBulkAction>;

/** What a client bulk job does to each client (the state machine's moves; delete skips a client with subscriptions or payments). */
export const ClientBulkAction = z.discriminatedUnion('type', [
  z.object({ type: z.literal('approve') }).strict(),
  z.object({ type: z.literal('reject') }).strict(),
  z.object({ type: z.literal('disable') }).strict(),
  z.object({ type: z.literal('enable') }).strict(),
  z.object({ type: z.literal('delete') }).strict(),
]);
export type ClientBulkAction = z.output<typeof ClientBulkAction>;

const selection = <F extends z.ZodTypeAny, A extends z.ZodTypeAny>(filter: F, action: A) =>
  z
    .object({
      ids: z.array(RefId).min(1).max(BULK_MAX_IDS).optional().meta({ description: 'these, at most 20,000 (unknown ids are left out)' }),
      filter: filter.optional().meta({ description: "every one the list route's filters and q select now" }),
      action,
      dry_run: z.boolean().default(false).meta({ description: 'answer how many and a sample; change nothing' }),
    })
    .strict()
    .superRefine((v, ctx) => {
      if ((v.ids === undefined) === (v.filter === undefined))
        ctx.addIssue({ code: 'custom', path: ['ids'], message: 'give either ids or a filter (an empty filter {} is every one)' });
    });

export const SubscriptionBulkInput = selection(
  z.object({ status: SubscriptionStatusNow.optional(), client_id: RefId.optional(), q: Q.optional() }).strict(),
  SubscriptionBulkAction,
);
export type SubscriptionBulkInput = z.output<typeof SubscriptionBulkInput>;

export const ClientBulkInput = selection(z.object({ status: ClientStatus.optional(), q: Q.optional() }).strict(), ClientBulkAction);
export type ClientBulkInput = z.output<typeof ClientBulkInput>;
