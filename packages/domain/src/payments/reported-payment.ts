import type { PaymentRow } from '@svc/db';

/** How a provider's report names a payment: our id (carried in its metadata or payload) and its own id. */
export interface ReportedIds {
  payment_id?: string | null | undefined;
  provider_payment_id: string;
}

/**
 * Is a report (a verified webhook, a re-read) about this payment? Both ids must name it: our id
 * as the provider carried it back, and the provider's id as the checkout stored it. Our id alone
 * is what the provider's metadata says, which names no checkout; the provider's id alone may be
 * a checkout made for another payment (a retry that left one behind). A payment whose checkout
 * was never stored (provider_payment_id null) is named by no report: its payer never got a URL.
 */
export const namesPayment = (payment: Pick<PaymentRow, 'id' | 'provider_payment_id'>, ids: ReportedIds): boolean =>
  ids.payment_id === payment.id && payment.provider_payment_id !== null && ids.provider_payment_id === payment.provider_payment_id;

/** What an audit entry says of a report that named another payment than the one it was matched to. */
export const idsDisagree = (payment: Pick<PaymentRow, 'id' | 'provider_payment_id'>, ids: ReportedIds) => ({
  reason: 'ids',
  expected: { payment_id: payment.id, provider_payment_id: payment.provider_payment_id },
  reported: { payment_id: ids.payment_id ?? null, provider_payment_id: ids.provider_payment_id },
});
