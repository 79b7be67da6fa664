import type { SubscriptionStatus } from '@svc/db';
import type { DomainEvent } from '../events/catalogue.ts';

/** A subscription as a change left it, and what it was before: what its events are read from. */
export interface SubscriptionChange {
  id: string;
  client_id: string;
  from: { status: SubscriptionStatus; expires_at: Date | null };
  to: {
    status: SubscriptionStatus;
    expires_at: Date | null;
    used_bytes: number | bigint | string;
    traffic_limit_bytes: number | bigint | string | null;
  };
  /** The plan a payment applied (subscription.renewed names it). */
  plan_id?: string | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * The events a subscription's change raises (docs/events.md, "Subscriptions"), decided here once
 * for every verb that changes one (PATCH, a bulk action, a payment, the sweeps, a refund):
 * - its status entering disabled, limited or expired raises that; leaving disabled raises enabled;
 * - a later expiry (or none where there was one), or a plan a payment applied, raises renewed.
 * Nothing is raised for what did not change, so a change applied again raises nothing.
 */
export function subscriptionChangeEvents(c: SubscriptionChange): DomainEvent[] {
  const subject = { subscription_id: c.id, client_id: c.client_id };
  const { from, to } = c;
  const events: DomainEvent[] = [];
  if (from.status !== to.status) {
    if (to.status === 'disabled') events.push({ type: 'subscription.disabled', payload: { ...subject, previous_status: from.status } });
    if (from.status === 'disabled') events.push({ type: 'subscription.enabled', payload: { ...subject, status: to.status } });
    if (to.status === 'limited')
      events.push({
        type: 'subscription.limited',
        payload: { ...subject, used_bytes: Number(to.used_bytes), traffic_limit_bytes: Number(to.traffic_limit_bytes ?? 0) },
      });
    if (to.status === 'expired') events.push({ type: 'subscription.expired', payload: { ...subject, expires_at: iso(to.expires_at) } });
  }
  const longer = from.expires_at !== null && (to.expires_at === null || to.expires_at.getTime() > from.expires_at.getTime());
  // A plan a payment applied is a renewal even where the term did not move (one that never expires got its traffic back).
  if (longer || c.plan_id)
    events.push({
      type: 'subscription.renewed',
      payload: {
        ...subject,
        previous_expires_at: iso(from.expires_at),
        expires_at: iso(to.expires_at),
        plan_id: c.plan_id ?? null,
        status: to.status,
      },
    });
  return events;
}
