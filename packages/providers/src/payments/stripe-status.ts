import type { ProviderPaymentStatus } from '@svc/domain';
import { isRecord } from './webhook-input.ts';

/**
 * Stripe's states of a Checkout Session (and of its payment) -> ours. A state is named
 * `session.<status>[.<payment_status>]`, or by the event that is the only sign of it.
 */
export const STRIPE_STATUS_TABLE: Readonly<Record<string, ProviderPaymentStatus>> = {
  'session.open': 'pending',
  'session.complete.unpaid': 'pending',
  'session.complete.paid': 'succeeded',
  'session.complete.no_payment_required': 'succeeded',
  'session.expired': 'expired',
  'payment.async_failed': 'failed',
  'payment.canceled': 'canceled',
  'charge.refunded': 'refunded',
};

/** Which state each webhook event type reports (the session events; charge.refunded is read apart). */
export const STRIPE_EVENT_STATES: Readonly<Record<string, (session: Record<string, unknown>) => string>> = {
  'checkout.session.completed': (s) => `session.complete.${typeof s.payment_status === 'string' ? s.payment_status : 'unpaid'}`,
  'checkout.session.async_payment_succeeded': () => 'session.complete.paid',
  'checkout.session.async_payment_failed': () => 'payment.async_failed',
  'checkout.session.expired': () => 'session.expired',
};

/**
 * The state of a session read from the API, with its payment intent and latest charge
 * expanded: a paid session whose charge is fully refunded is refunded; a completed, unpaid
 * session whose payment intent went back to requiring a payment method failed.
 */
export function stripeSessionState(session: Record<string, unknown>): string {
  const status = session.status;
  if (status === 'expired') return 'session.expired';
  if (status !== 'complete') return 'session.open';
  const intent = isRecord(session.payment_intent) ? session.payment_intent : undefined;
  const charge = intent && isRecord(intent.latest_charge) ? intent.latest_charge : undefined;
  if (session.payment_status === 'paid' || session.payment_status === 'no_payment_required') {
    return charge?.refunded === true ? 'charge.refunded' : `session.complete.${session.payment_status}`;
  }
  if (intent?.status === 'canceled') return 'payment.canceled';
  if (intent?.status === 'requires_payment_method' && intent.last_payment_error != null) return 'payment.async_failed';
  return 'session.complete.unpaid';
}

export const stripeMapStatus = (state: string): ProviderPaymentStatus | null =>
  Object.hasOwn(STRIPE_STATUS_TABLE, state) ? (STRIPE_STATUS_TABLE[state] ?? null) : null;
