import type { PaymentRow } from '@svc/db';

/** The answer to a checkout (POST /portal/v1/checkout), and the core of a payment as its customer sees it. */
export interface CheckoutView {
  payment_id: string;
  status: PaymentRow['status'];
  plan_id: string;
  provider_id: string;
  subscription_id: string | null;
  /** Minor units of `currency`. */
  amount: number;
  currency: string;
  /** The provider's page the payer goes to; null for a manual provider (see instructions). */
  checkout_url: string | null;
  instructions: string | null;
  /** When the payment stops being waited for: the provider's expiry, or a manual payment's deadline (billing.manual_max_days). */
  expires_at: string | null;
  created_at: string;
}

export const checkoutView = (r: PaymentRow): CheckoutView => ({
  payment_id: r.id,
  status: r.status,
  plan_id: r.plan_id,
  provider_id: r.provider_id,
  subscription_id: r.subscription_id,
  amount: Number(r.amount),
  currency: r.currency,
  checkout_url: r.checkout_url,
  instructions: r.instructions,
  expires_at: r.expires_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
});
