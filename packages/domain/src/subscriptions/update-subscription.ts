import { z } from 'zod';
import { recountDevices } from '../devices/device-report.ts';
import { ValidationError } from '../errors.ts';
import { recordEvents } from '../events/record-event.ts';
import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import { DeviceLimit, SpeedCapBps } from '../limits/limit-fields.ts';
import { grantTrafficSlices } from '../limits/traffic-slices.ts';
import { AdminNote } from '../shared/admin-note.ts';
import type { DomainContext } from '../shared/context.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { sameSet, unknownAccessGroups } from './access-groups.ts';
import { recheckLimitsAfterCommit } from './limits.ts';
import { lockSubscription } from './lock-subscription.ts';
import { writtenSubscription } from './read-subscriptions.ts';
import { regroupSubscription } from './regroup-subscription.ts';
import { subscriptionChangeEvents } from './subscription-events.ts';
import {
  AdminSubscriptionStatus,
  Instant,
  SubscriptionAccessGroupIds,
  SubscriptionRenewal,
  TrafficLimitBytes,
} from './subscription-fields.ts';
import { countersOf } from './subscription-rows.ts';
import { isAdminDisabled, subscriptionStatus } from './subscription-status.ts';
import { groupIdsOf, type SubscriptionView, subscriptionView } from './subscription-view.ts';

/** PATCH /subscriptions/{id}: a merge; absent fields stay as they are. */
export const UpdateSubscriptionInput = z
  .object({
    renewal: SubscriptionRenewal.optional(),
    traffic_limit_bytes: TrafficLimitBytes.optional(),
    device_limit: DeviceLimit.optional(),
    upload_bps: SpeedCapBps('upload').optional(),
    download_bps: SpeedCapBps('download').optional(),
    status: AdminSubscriptionStatus.optional().meta({
      description: 'the admin switch; limited and expired are computed and cannot be set',
    }),
    expires_at: Instant.nullable().optional().meta({ description: 'null never expires; a past time expires it now' }),
    access_group_ids: SubscriptionAccessGroupIds.optional().meta({ description: 'replaces the whole list' }),
    note: AdminNote.optional(),
  })
  .strict()
  .brand<'UpdateSubscriptionInput'>();
export type UpdateSubscriptionInput = z.output<typeof UpdateSubscriptionInput>;

const numberOrNull = (v: number | string | null) => (v === null ? null : Number(v));

/**
 * PATCH merge; the status is computed again and stored. Nodes get a new revision only when
 * something they run changes: the stored status, or the access groups (the nodes before
 * and after the change), or a live limit or the expiry (device limit, speed caps, not_after_ms:
 * in NodeConfig.user_limits). Renewal, traffic limit or note alone, with the status unchanged,
 * reach no node.
 */
export async function updateSubscription(ctx: DomainContext, id: string, input: UpdateSubscriptionInput): Promise<SubscriptionView> {
  if (isEmptyPatch(input)) return writtenSubscription(ctx, id);
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    uow.subscriptionLinksChanged();
    const current = await lockSubscription(trx, id);
    if (input.access_group_ids !== undefined) {
      const errors = await unknownAccessGroups(trx, input.access_group_ids);
      if (Object.keys(errors).length > 0) throw new ValidationError('unknown access groups', errors);
    }
    const now = ctx.clock.now();
    const beforeGroups = (await groupIdsOf(trx, [id])).get(id) ?? [];
    const groupsChanged = input.access_group_ids !== undefined && !sameSet(beforeGroups, input.access_group_ids);
    const next = {
      traffic_limit_bytes: input.traffic_limit_bytes !== undefined ? input.traffic_limit_bytes : current.traffic_limit_bytes,
      expires_at: input.expires_at !== undefined ? input.expires_at : current.expires_at,
    };
    const adminDisabled = input.status !== undefined ? input.status === 'disabled' : isAdminDisabled(current);
    const status = subscriptionStatus({ admin_disabled: adminDisabled, used_bytes: current.used_bytes, ...next }, now);

    // Issue 36: the live limits are in the nodes' desired state (NodeConfig.user_limits): a change reaches them.
    const limitsChanged =
      (input.device_limit !== undefined && input.device_limit !== current.device_limit) ||
      (input.upload_bps !== undefined && input.upload_bps !== numberOrNull(current.upload_bps)) ||
      (input.download_bps !== undefined && input.download_bps !== numberOrNull(current.download_bps));
    // The fleet-wide device count with the new limit at once (devices/device-report.ts), not at the next DeviceReport.
    if (input.device_limit !== undefined && input.device_limit !== current.device_limit)
      uow.afterCommit(async () => void (await recountDevices(ctx, [id])));
    // And a new expiry: the nodes cut the user at not_after_ms while the control plane is away.
    const expiryChanged = (next.expires_at?.getTime() ?? null) !== (current.expires_at?.getTime() ?? null);
    const nodesBefore =
      groupsChanged || status !== current.status || limitsChanged || expiryChanged ? await nodesOfSubscriptions(trx, [id]) : [];
    const row = await trx
      .updateTable('subscriptions')
      .set({
        ...next,
        ...(input.renewal !== undefined ? { renewal: input.renewal } : {}),
        ...(input.device_limit !== undefined ? { device_limit: input.device_limit } : {}),
        ...(input.upload_bps !== undefined ? { upload_bps: input.upload_bps } : {}),
        ...(input.download_bps !== undefined ? { download_bps: input.download_bps } : {}),
        ...(input.note !== undefined ? { note: input.note } : {}),
        status,
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .then((r) => ({ ...r, ...countersOf(current) }));
    // used_bytes was read without locking the counters (a credit does not wait for an edit): judged again after commit.
    recheckLimitsAfterCommit(uow, [{ id, from: current, to: { status, traffic_limit_bytes: next.traffic_limit_bytes } }]);
    let groups = beforeGroups;
    if (groupsChanged && input.access_group_ids) groups = await regroupSubscription(uow, now, id, beforeGroups, input.access_group_ids);
    const nodesAfter = groupsChanged ? await nodesOfSubscriptions(trx, [id]) : [];
    const bumped = await bumpNodeRevisions(uow, [...nodesBefore, ...nodesAfter]);
    // Issue 36: a first traffic limit gets its slice on the nodes now (a new revision where granted), not at their next change.
    if (input.traffic_limit_bytes != null && current.traffic_limit_bytes === null && status === 'active')
      await grantTrafficSlices(uow, await nodesOfSubscriptions(trx, [id]), now, { subscriptions: [id] });

    const changed = Object.keys(input).filter((k) => input[k as keyof UpdateSubscriptionInput] !== undefined);
    uow.audit({
      action: 'subscription.updated',
      entity_type: 'subscription',
      entity_id: id,
      details: {
        changed,
        ...(status !== current.status ? { status: { from: current.status, to: status } } : {}),
        ...(groupsChanged ? { access_group_ids: { from: beforeGroups, to: groups } } : {}),
        ...(bumped.length ? { nodes_bumped: bumped } : {}),
      },
    });
    await recordEvents(
      uow,
      [
        {
          type: 'subscription.updated',
          payload: { subscription_id: id, client_id: row.client_id, changed, status, bulk_job_id: null },
        },
        ...subscriptionChangeEvents({ id, client_id: row.client_id, from: current, to: row }),
      ],
      now,
    );
    return subscriptionView(ctx, row, groups, now);
  });
}
