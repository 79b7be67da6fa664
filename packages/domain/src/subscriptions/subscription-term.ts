import type { SubscriptionRow } from '@svc/db';
import { recountDevicesIn } from '../devices/device-report.ts';
import { recordEvents } from '../events/record-event.ts';
import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { parseInput } from '../shared/input.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { sameSet } from './access-groups.ts';
import { CreateSubscriptionInput, createSubscription } from './create-subscription.ts';
import { regroupSubscription } from './regroup-subscription.ts';
import { subscriptionChangeEvents } from './subscription-events.ts';
import { subscriptionsWithCounters, zeroPeriodCounters } from './subscription-rows.ts';
import { isAdminDisabled, subscriptionStatus } from './subscription-status.ts';
import { groupIdsOf } from './subscription-view.ts';

/**
 * A subscription's term: how long it runs, and on what terms. The verbs a payment's effect is
 * made of (docs/payments.md, "What a payment buys", "Refunds"), and that an admin's "+30 days"
 * and the bulk actions reuse: a new subscription from a plan, more time (with a plan's terms or
 * without), less time. Each runs inside the caller's unit of work, locks the subscription, moves
 * its status with the clock's rule (subscriptionStatus), gives the nodes that serve it a new
 * revision when what they serve changes, says the link changed, and is audited.
 */

/** What a plan gives a subscription bought with it. */
export interface PlanTerms {
  plan_id: string;
  duration_ms: number;
  /** null: unlimited. */
  traffic_limit_bytes: number | null;
  /** Issue 36: the plan's live limits, copied as its traffic limit is (null: none / uncapped). */
  device_limit: number | null;
  upload_bps: number | null;
  download_bps: number | null;
  renewal: SubscriptionRow['renewal'];
  /** Empty: the plan names no groups (a renewal keeps the subscription's own). */
  access_group_ids: readonly string[];
}

export interface TermChange {
  subscription_id: string;
  expires_before: string | null;
  expires_after: string | null;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** A new subscription for `clientId` on a plan's terms, running the plan's duration from now. */
export async function subscriptionFromPlan(
  ctx: DomainContext,
  uow: UnitOfWork,
  clientId: string,
  terms: PlanTerms,
  now: Date,
): Promise<TermChange> {
  const expires = new Date(now.getTime() + terms.duration_ms);
  const created = await createSubscription(
    ctx,
    parseInput(CreateSubscriptionInput, {
      client_id: clientId,
      access_group_ids: [...terms.access_group_ids],
      traffic_limit_bytes: terms.traffic_limit_bytes,
      device_limit: terms.device_limit,
      upload_bps: terms.upload_bps,
      download_bps: terms.download_bps,
      expires_at: expires.toISOString(),
      renewal: terms.renewal,
    }),
    uow,
  );
  await uow.db.updateTable('subscriptions').set({ plan_id: terms.plan_id }).where('id', '=', created.id).execute();
  return { subscription_id: created.id, expires_before: null, expires_after: expires.toISOString() };
}

/**
 * More time: the expiry moves on by `by_ms` from the later of now and the current expiry (time
 * left is kept; a subscription that never expires stays so). With a plan's `terms` (a paid
 * renewal) it also takes the plan's traffic limit, renewal and access groups (when the plan names
 * any), and its traffic starts a new period: the plan's full traffic comes back. An admin's
 * `disabled` stays. Null when the subscription does not exist (deleted since).
 */
export async function extendSubscription(
  uow: UnitOfWork,
  subscriptionId: string,
  change: { by_ms: number; terms?: PlanTerms },
  now: Date,
): Promise<TermChange | null> {
  const trx = uow.db;
  // Both rows locked: a plan's terms start the traffic count again (the counters row).
  const sub = await subscriptionsWithCounters(trx).where('id', '=', subscriptionId).forUpdate().executeTakeFirst();
  if (!sub) return null;
  const { terms } = change;
  const expiresAfter = sub.expires_at === null ? null : new Date(Math.max(now.getTime(), sub.expires_at.getTime()) + change.by_ms);
  const traffic = terms ? terms.traffic_limit_bytes : sub.traffic_limit_bytes === null ? null : Number(sub.traffic_limit_bytes);
  const used = terms ? 0 : Number(sub.used_bytes);
  const status = subscriptionStatus(
    { admin_disabled: isAdminDisabled(sub), used_bytes: used, traffic_limit_bytes: traffic, expires_at: expiresAfter },
    now,
  );
  const beforeGroups = (await groupIdsOf(trx, [sub.id])).get(sub.id) ?? [];
  const nextGroups = terms && terms.access_group_ids.length > 0 ? terms.access_group_ids : beforeGroups;
  const groupsChange = !sameSet(beforeGroups, nextGroups);
  const nodesBefore = await nodesOfSubscriptions(trx, [sub.id]);
  await trx
    .updateTable('subscriptions')
    .set({
      expires_at: expiresAfter,
      status,
      updated_at: now,
      ...(terms
        ? {
            traffic_limit_bytes: traffic,
            device_limit: terms.device_limit,
            upload_bps: terms.upload_bps,
            download_bps: terms.download_bps,
            renewal: terms.renewal,
            plan_id: terms.plan_id,
            period_started_at: now,
          }
        : {}),
    })
    .where('id', '=', sub.id)
    .execute();
  if (terms) await zeroPeriodCounters(trx, [sub.id]);
  if (groupsChange) await regroupSubscription(uow, now, sub.id, beforeGroups, nextGroups);
  const nodesAfter = groupsChange ? await nodesOfSubscriptions(trx, [sub.id]) : [];
  // The users on the nodes change when the status or the groups do, their limits when a plan's live
  // limits or the expiry differ (NodeConfig.user_limits: the nodes cut at not_after_ms on their own).
  const limitsChange =
    terms !== undefined &&
    (terms.device_limit !== sub.device_limit ||
      terms.upload_bps !== (sub.upload_bps === null ? null : Number(sub.upload_bps)) ||
      terms.download_bps !== (sub.download_bps === null ? null : Number(sub.download_bps)));
  const expiryChange = (expiresAfter?.getTime() ?? null) !== (sub.expires_at?.getTime() ?? null);
  const bumped =
    status !== sub.status || groupsChange || limitsChange || expiryChange
      ? await bumpNodeRevisions(uow, [...nodesBefore, ...nodesAfter])
      : [];
  if (terms !== undefined && terms.device_limit !== sub.device_limit) await recountDevicesIn(uow, [sub.id], now);
  uow.subscriptionLinksChanged();
  uow.audit({
    action: 'subscription.extended',
    entity_type: 'subscription',
    entity_id: sub.id,
    details: {
      ...(terms ? { plan_id: terms.plan_id } : { by_days: change.by_ms / 86_400_000 }),
      expires_at: { from: iso(sub.expires_at), to: iso(expiresAfter) },
      ...(status !== sub.status ? { status: { from: sub.status, to: status } } : {}),
      ...(groupsChange ? { access_group_ids: { from: beforeGroups, to: [...nextGroups] } } : {}),
      ...(bumped.length ? { nodes_bumped: bumped } : {}),
    },
  });
  await recordEvents(
    uow,
    subscriptionChangeEvents({
      id: sub.id,
      client_id: sub.client_id,
      from: sub,
      to: { status, expires_at: expiresAfter, used_bytes: used, traffic_limit_bytes: traffic },
      plan_id: terms?.plan_id ?? null,
    }),
    now,
  );
  return { subscription_id: sub.id, expires_before: iso(sub.expires_at), expires_after: iso(expiresAfter) };
}

/**
 * Less time: the expiry moves back by `by_ms`, never earlier than now (`by_ms: 'all'`: it
 * expires now); a subscription that never expires stays so unless all is taken. Traffic,
 * renewal and access groups stay. Audited as `action` (a refund says why). Null when the
 * subscription does not exist.
 */
export async function shortenSubscription(
  uow: UnitOfWork,
  subscriptionId: string,
  change: { by_ms: number | 'all'; action: string; details?: Record<string, unknown> },
  now: Date,
): Promise<TermChange | null> {
  const trx = uow.db;
  const sub = await subscriptionsWithCounters(trx).where('id', '=', subscriptionId).forUpdate('subscriptions').executeTakeFirst();
  if (!sub) return null;
  const expires =
    change.by_ms === 'all'
      ? now
      : sub.expires_at === null
        ? null
        : new Date(Math.max(now.getTime(), sub.expires_at.getTime() - change.by_ms));
  const status = subscriptionStatus(
    {
      admin_disabled: isAdminDisabled(sub),
      used_bytes: Number(sub.used_bytes),
      traffic_limit_bytes: sub.traffic_limit_bytes === null ? null : Number(sub.traffic_limit_bytes),
      expires_at: expires,
    },
    now,
  );
  await trx.updateTable('subscriptions').set({ expires_at: expires, status, updated_at: now }).where('id', '=', sub.id).execute();
  // A new expiry reaches the nodes too (NodeConfig.user_limits.not_after_ms).
  const expiryChange = (expires?.getTime() ?? null) !== (sub.expires_at?.getTime() ?? null);
  const bumped = status !== sub.status || expiryChange ? await bumpNodeRevisions(uow, await nodesOfSubscriptions(trx, [sub.id])) : [];
  uow.subscriptionLinksChanged();
  uow.audit({
    action: change.action,
    entity_type: 'subscription',
    entity_id: sub.id,
    details: {
      ...change.details,
      expires_at: { from: iso(sub.expires_at), to: iso(expires) },
      ...(status !== sub.status ? { status: { from: sub.status, to: status } } : {}),
      ...(bumped.length ? { nodes_bumped: bumped } : {}),
    },
  });
  await recordEvents(
    uow,
    subscriptionChangeEvents({
      id: sub.id,
      client_id: sub.client_id,
      from: sub,
      to: { status, expires_at: expires, used_bytes: sub.used_bytes, traffic_limit_bytes: sub.traffic_limit_bytes },
    }),
    now,
  );
  return { subscription_id: sub.id, expires_before: iso(sub.expires_at), expires_after: iso(expires) };
}
