import type { PaymentStatus } from '@svc/db';
import type { ProviderPaymentStatus } from '../billing/providers/port.ts';

/**
 * What a reported state does to a payment's effect on its subscription: `apply` the plan
 * (the payment succeeded), `revert` it (a refund of a payment that was applied), or nothing.
 */
export type PaymentEffectStep = 'apply' | 'revert' | 'none';

export interface PaymentTransition {
  status: PaymentStatus;
  effect: PaymentEffectStep;
}

/**
 * The one rule for how a payment's status moves when a provider (webhook or re-read) or an
 * admin reports a state; null when the report changes nothing (the same state again, or a
 * stale one that arrived out of order). Webhooks may come twice and in any order, so the
 * rule only ever moves forward:
 * - `pending` is never reported back to: a payment does not un-happen;
 * - pending -> succeeded applies the plan; -> failed / expired / canceled ends it;
 * - failed / expired / canceled -> succeeded: the money came after all (a crypto invoice paid
 *   at the last second, a late bank transfer); the plan is applied. Between these three, the
 *   first word stands;
 * - succeeded -> refunded takes the plan's effect back; a later failed/expired/canceled about a
 *   succeeded payment is stale (it happened before the success) and is ignored;
 * - a refund heard of before the success (pending/failed/expired/canceled -> refunded): the
 *   payment ends refunded and the plan is never applied; the success arriving afterwards is
 *   stale;
 * - refunded is final.
 */
export function paymentTransition(current: PaymentStatus, reported: ProviderPaymentStatus): PaymentTransition | null {
  if (reported === 'pending' || reported === current || current === 'refunded') return null;
  switch (current) {
    case 'pending':
      return { status: reported, effect: reported === 'succeeded' ? 'apply' : 'none' };
    case 'failed':
    case 'expired':
    case 'canceled':
      if (reported === 'succeeded') return { status: 'succeeded', effect: 'apply' };
      if (reported === 'refunded') return { status: 'refunded', effect: 'none' };
      return null;
    case 'succeeded':
      return reported === 'refunded' ? { status: 'refunded', effect: 'revert' } : null;
  }
}
