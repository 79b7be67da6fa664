import type { ProviderPaymentStatus } from '@svc/domain';

/**
 * YooKassa payment states -> ours. `canceled` is split by `cancellation_details.reason`
 * (an unpaid payment that timed out expired; one the shop canceled is canceled; every other
 * reason, declines and fraud checks, failed); a succeeded payment whose refunds add up to its
 * amount is `succeeded.refunded`.
 */
export const YOOKASSA_STATUS_TABLE: Readonly<Record<string, ProviderPaymentStatus>> = {
  pending: 'pending',
  waiting_for_capture: 'pending',
  succeeded: 'succeeded',
  'succeeded.refunded': 'refunded',
  canceled: 'failed',
  'canceled.expired_on_confirmation': 'expired',
  'canceled.expired_on_capture': 'expired',
  'canceled.canceled_by_merchant': 'canceled',
};

export const yookassaMapStatus = (state: string): ProviderPaymentStatus | null =>
  Object.hasOwn(YOOKASSA_STATUS_TABLE, state) ? (YOOKASSA_STATUS_TABLE[state] ?? null) : null;

/** The state name of a payment object read from the API. */
export function yookassaPaymentState(status: string, cancellationReason: string | undefined, fullyRefunded: boolean): string {
  if (status === 'succeeded' && fullyRefunded) return 'succeeded.refunded';
  if (status === 'canceled' && cancellationReason && yookassaMapStatus(`canceled.${cancellationReason}`))
    return `canceled.${cancellationReason}`;
  return status;
}
