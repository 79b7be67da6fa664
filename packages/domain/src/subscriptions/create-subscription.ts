import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { recordEvent } from '../events/record-event.ts';
import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import { DeviceLimit, SpeedCapBps } from '../limits/limit-fields.ts';
import { AdminNote } from '../shared/admin-note.ts';
import type { DomainContext } from '../shared/context.ts';
import { RefId } from '../shared/fields.ts';
import { newId } from '../shared/ids.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';
import { setSubscriptionGroups, unknownAccessGroups } from './access-groups.ts';
import { newCredentials } from './credentials.ts';
import { Instant, SubscriptionAccessGroupIds, SubscriptionRenewal, TrafficLimitBytes } from './subscription-fields.ts';
import { subscriptionStatus } from './subscription-status.ts';
import { type SubscriptionView, subscriptionView } from './subscription-view.ts';

/**
 * POST /subscriptions, fixtures and benches. That the client and the access groups exist, and
 * that expires_at lies ahead of the clock, is checked by the use case.
 */
export const CreateSubscriptionInput = z
  .object({
    client_id: RefId,
    access_group_ids: SubscriptionAccessGroupIds,
    traffic_limit_bytes: TrafficLimitBytes.optional(),
    device_limit: DeviceLimit.optional(),
    upload_bps: SpeedCapBps('upload').optional(),
    download_bps: SpeedCapBps('download').optional(),
    expires_at: Instant.nullable().optional().meta({ description: 'in the future; null or absent never expires' }),
    renewal: SubscriptionRenewal.optional().meta({ description: 'when used_bytes starts over; default no_reset' }),
    note: AdminNote.optional(),
  })
  .strict()
  .brand<'CreateSubscriptionInput'>();
export type CreateSubscriptionInput = z.output<typeof CreateSubscriptionInput>;

/**
 * A new subscription with its own proxy credentials and link token. Unknown client or
 * access groups are a 400 naming each field. The nodes of its inbounds get a new revision.
 */
export async function createSubscription(
  ctx: DomainContext,
  input: CreateSubscriptionInput,
  /** A unit of work to join (a payment that creates the subscription it paid for). */
  within?: UnitOfWork,
): Promise<SubscriptionView> {
  const { credentials } = newCredentials(ctx.secrets);
  return unitOfWork(within ?? ctx, async (uow) => {
    const trx = uow.db;
    const now = ctx.clock.now();
    const errors: Record<string, string> = {};
    if (input.expires_at && input.expires_at.getTime() <= now.getTime()) errors.expires_at = 'must be in the future';
    // FOR KEY SHARE: a concurrent delete of the client waits until this subscription exists, then sees it.
    const client = await trx.selectFrom('clients').select('id').where('id', '=', input.client_id).forKeyShare().executeTakeFirst();
    if (!client) errors.client_id = `no client ${input.client_id}`;
    Object.assign(errors, await unknownAccessGroups(trx, input.access_group_ids));
    if (Object.keys(errors).length > 0) throw new ValidationError('the subscription refers to what does not exist or is invalid', errors);

    const fields = {
      traffic_limit_bytes: input.traffic_limit_bytes ?? null,
      expires_at: input.expires_at ?? null,
      used_bytes: 0,
    };
    const status = subscriptionStatus({ admin_disabled: false, ...fields }, now);
    const id = newId('sub', now.getTime());
    const row = await trx
      .insertInto('subscriptions')
      .values({
        id,
        client_id: input.client_id,
        status,
        traffic_limit_bytes: fields.traffic_limit_bytes,
        device_limit: input.device_limit ?? null,
        upload_bps: input.upload_bps ?? null,
        download_bps: input.download_bps ?? null,
        expires_at: fields.expires_at,
        renewal: input.renewal ?? 'no_reset',
        period_started_at: now,
        ...credentials,
        credentials_rotated_at: null,
        note: input.note ?? null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
      // Its counters row, added by the insert's trigger, starts at 0.
      .then((r) => ({ ...r, used_bytes: 0, period_uplink_bytes: 0, period_downlink_bytes: 0, lifetime_used_bytes: 0 }));
    await setSubscriptionGroups(trx, id, input.access_group_ids);
    const bumped = await bumpNodeRevisions(uow, await nodesOfSubscriptions(trx, [id]));
    const groupIds = [...new Set(input.access_group_ids)].sort();
    uow.audit({
      action: 'subscription.created',
      entity_type: 'subscription',
      entity_id: id,
      details: {
        client_id: row.client_id,
        access_group_ids: groupIds,
        traffic_limit_bytes: row.traffic_limit_bytes,
        expires_at: row.expires_at?.toISOString() ?? null,
        renewal: row.renewal,
        status,
        nodes_bumped: bumped,
      },
    });
    await recordEvent(
      uow,
      {
        type: 'subscription.created',
        payload: {
          subscription_id: id,
          client_id: row.client_id,
          status,
          expires_at: row.expires_at?.toISOString() ?? null,
          traffic_limit_bytes: row.traffic_limit_bytes === null ? null : Number(row.traffic_limit_bytes),
          renewal: row.renewal,
          access_group_ids: groupIds,
        },
      },
      now,
    );
    return subscriptionView(ctx, row, groupIds, now);
  });
}
