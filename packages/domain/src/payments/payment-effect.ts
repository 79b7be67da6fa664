import type { AppliedPaymentEffect, PaymentRow, PlanRow, SubscriptionRow } from '@svc/db';
import { planAccessGroups } from '../billing/plan-view.ts';
import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { parseInput } from '../shared/input.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { sameSet } from '../subscriptions/access-groups.ts';
import { CreateSubscriptionInput, createSubscription } from '../subscriptions/create-subscription.ts';
import { regroupSubscription } from '../subscriptions/regroup-subscription.ts';
import { isAdminDisabled, subscriptionStatus } from '../subscriptions/subscription-status.ts';
import { groupIdsOf } from '../subscriptions/subscription-view.ts';

const DAY_MS = 86_400_000;

/**
 * What a succeeded payment buys (docs/payments.md, "What a payment buys"), applied once, in
 * the unit that records the success:
 * - without a subscription (or when the one it named was deleted since): a new subscription
 *   for the client with the plan's duration from now, its traffic limit, renewal and access
 *   groups;
 * - with one: its expiry moves on by the plan's duration from the later of now and its current
 *   expiry (time left is kept; a subscription that never expires stays so); it takes the
 *   plan's traffic limit, renewal and access groups (when the plan names any), and its traffic
 *   starts a new period (used bytes 0): a paid renewal brings the plan's full traffic back.
 *   An admin's `disabled` stays. The nodes of the groups before and after get a new revision.
 */
export async function applyPaymentEffect(
  ctx: DomainContext,
  uow: UnitOfWork,
  payment: PaymentRow,
  plan: PlanRow,
  now: Date,
): Promise<AppliedPaymentEffect> {
  const trx = uow.db;
  const planGroups = (await planAccessGroups(trx, [plan.id])).get(plan.id) ?? [];
  const duration = plan.duration_days * DAY_MS;
  const current = payment.subscription_id
    ? await trx.selectFrom('subscriptions').selectAll().where('id', '=', payment.subscription_id).forUpdate().executeTakeFirst()
    : undefined;
  if (!current) {
    const expires = new Date(now.getTime() + duration);
    const created = await createSubscription(
      ctx,
      parseInput(CreateSubscriptionInput, {
        client_id: payment.client_id,
        access_group_ids: planGroups,
        traffic_limit_bytes: plan.traffic_limit_bytes === null ? null : Number(plan.traffic_limit_bytes),
        expires_at: expires.toISOString(),
        renewal: plan.renewal,
      }),
      uow,
    );
    await trx.updateTable('subscriptions').set({ plan_id: plan.id }).where('id', '=', created.id).execute();
    return { subscription_id: created.id, created: true, expires_before: null, expires_after: expires.toISOString() };
  }
  return extendSubscription(uow, current, plan, planGroups, duration, now);
}

async function extendSubscription(
  uow: UnitOfWork,
  sub: SubscriptionRow,
  plan: PlanRow,
  planGroups: string[],
  duration: number,
  now: Date,
): Promise<AppliedPaymentEffect> {
  const trx = uow.db;
  const id = sub.id;
  const expiresAfter = sub.expires_at === null ? null : new Date(Math.max(now.getTime(), sub.expires_at.getTime()) + duration);
  const traffic = plan.traffic_limit_bytes === null ? null : Number(plan.traffic_limit_bytes);
  const status = subscriptionStatus(
    { admin_disabled: isAdminDisabled(sub), used_bytes: 0, traffic_limit_bytes: traffic, expires_at: expiresAfter },
    now,
  );
  const beforeGroups = (await groupIdsOf(trx, [id])).get(id) ?? [];
  const groupsChange = planGroups.length > 0 && !sameSet(beforeGroups, planGroups);
  const nodesBefore = await nodesOfSubscriptions(trx, [id]);
  await trx
    .updateTable('subscriptions')
    .set({
      expires_at: expiresAfter,
      traffic_limit_bytes: traffic,
      renewal: plan.renewal,
      plan_id: plan.id,
      used_bytes: 0,
      period_uplink_bytes: 0,
      period_downlink_bytes: 0,
      period_started_at: now,
      status,
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
  if (groupsChange) await regroupSubscription(uow, now, id, beforeGroups, planGroups);
  const nodesAfter = groupsChange ? await nodesOfSubscriptions(trx, [id]) : [];
  // The users on the nodes change when the status or the groups do; a new expiry alone reaches
  // no node, but the bump is cheap and the link's answer changes with it.
  const bumped = status !== sub.status || groupsChange ? await bumpNodeRevisions(uow, [...nodesBefore, ...nodesAfter]) : [];
  uow.subscriptionLinksChanged();
  uow.audit({
    action: 'subscription.extended',
    entity_type: 'subscription',
    entity_id: id,
    details: {
      plan_id: plan.id,
      expires_at: { from: sub.expires_at?.toISOString() ?? null, to: expiresAfter?.toISOString() ?? null },
      ...(status !== sub.status ? { status: { from: sub.status, to: status } } : {}),
      ...(groupsChange ? { access_group_ids: { from: beforeGroups, to: [...planGroups] } } : {}),
      ...(bumped.length ? { nodes_bumped: bumped } : {}),
    },
  });
  return {
    subscription_id: id,
    created: false,
    expires_before: sub.expires_at?.toISOString() ?? null,
    expires_after: expiresAfter?.toISOString() ?? null,
  };
}

/**
 * The refund rule (docs/payments.md, "Refunds"): a refund takes back the time the payment
 * bought, and nothing else. The subscription's expiry moves back by the plan's duration, never
 * earlier than now (a subscription whose bought time is all gone expires now); one the payment
 * created expires now. Traffic limit, renewal and access groups stay as they are (what was
 * used is used; an admin adjusts the rest by hand if they want). A subscription deleted since
 * is left alone.
 */
export async function revertPaymentEffect(
  uow: UnitOfWork,
  effect: AppliedPaymentEffect,
  plan: PlanRow,
  now: Date,
): Promise<{ subscription_id: string; expires_at: string | null } | null> {
  const trx = uow.db;
  const sub = await trx.selectFrom('subscriptions').selectAll().where('id', '=', effect.subscription_id).forUpdate().executeTakeFirst();
  if (!sub) return null;
  let expires: Date | null;
  if (effect.created) expires = now;
  else if (sub.expires_at === null) expires = null;
  else expires = new Date(Math.max(now.getTime(), sub.expires_at.getTime() - plan.duration_days * DAY_MS));
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
  const bumped = status !== sub.status ? await bumpNodeRevisions(uow, await nodesOfSubscriptions(trx, [sub.id])) : [];
  uow.subscriptionLinksChanged();
  uow.audit({
    action: 'subscription.refund-reverted',
    entity_type: 'subscription',
    entity_id: sub.id,
    details: {
      plan_id: plan.id,
      expires_at: { from: sub.expires_at?.toISOString() ?? null, to: expires?.toISOString() ?? null },
      ...(status !== sub.status ? { status: { from: sub.status, to: status } } : {}),
      ...(bumped.length ? { nodes_bumped: bumped } : {}),
    },
  });
  return { subscription_id: sub.id, expires_at: expires?.toISOString() ?? null };
}
