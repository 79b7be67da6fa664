import type { AppliedPaymentEffect, PaymentRow, PlanRow } from '@svc/db';
import { planAccessGroups } from '../billing/plan-view.ts';
import { liveLimitsOf } from '../limits/limit-fields.ts';
import type { DomainContext } from '../shared/context.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { extendSubscription, type PlanTerms, shortenSubscription, subscriptionFromPlan } from '../subscriptions/subscription-term.ts';

const DAY_MS = 86_400_000;

/** What the plan gives a subscription bought with it (its groups read in the unit). */
async function planTerms(uow: UnitOfWork, plan: PlanRow): Promise<PlanTerms> {
  return {
    plan_id: plan.id,
    duration_ms: plan.duration_days * DAY_MS,
    traffic_limit_bytes: plan.traffic_limit_bytes === null ? null : Number(plan.traffic_limit_bytes),
    ...liveLimitsOf(plan),
    renewal: plan.renewal,
    access_group_ids: (await planAccessGroups(uow.db, [plan.id])).get(plan.id) ?? [],
  };
}

/**
 * What a succeeded payment buys (docs/payments.md, "What a payment buys"), applied once, in
 * the unit that records the success, through the subscription verbs (subscription-term.ts):
 * - without a subscription (or when the one it named was deleted since): a new one for the
 *   client on the plan's terms (subscriptionFromPlan);
 * - with one: the plan's duration more, on the plan's terms (extendSubscription with terms:
 *   time left kept, the plan's traffic, renewal and groups, a new traffic period).
 */
export async function applyPaymentEffect(
  ctx: DomainContext,
  uow: UnitOfWork,
  payment: PaymentRow,
  plan: PlanRow,
  now: Date,
): Promise<AppliedPaymentEffect> {
  const terms = await planTerms(uow, plan);
  const extended = payment.subscription_id
    ? await extendSubscription(uow, payment.subscription_id, { by_ms: terms.duration_ms, terms }, now)
    : null;
  const done = extended ?? (await subscriptionFromPlan(ctx, uow, payment.client_id, terms, now));
  return {
    subscription_id: done.subscription_id,
    created: extended === null,
    expires_before: done.expires_before,
    expires_after: done.expires_after,
  };
}

/**
 * The refund rule (docs/payments.md, "Refunds"): a refund takes back the time the payment
 * bought, and nothing else (shortenSubscription): the plan's duration, never earlier than now.
 * A subscription the payment created thus ends now, unless a later payment (or an admin) added
 * time to it: that time is not this payment's to take. Traffic limit, renewal and access groups
 * stay (what was used is used). A subscription deleted since is left alone.
 */
export async function revertPaymentEffect(
  uow: UnitOfWork,
  effect: AppliedPaymentEffect,
  plan: PlanRow,
  now: Date,
): Promise<{ subscription_id: string; expires_at: string | null } | null> {
  const done = await shortenSubscription(
    uow,
    effect.subscription_id,
    {
      by_ms: plan.duration_days * DAY_MS,
      action: 'subscription.refund-reverted',
      details: { plan_id: plan.id },
    },
    now,
  );
  return done && { subscription_id: done.subscription_id, expires_at: done.expires_after };
}
