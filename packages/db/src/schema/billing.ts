import type { ColumnType, Generated, Selectable } from 'kysely';

type Json<T> = ColumnType<T, string, string>;

export interface PlansTable {
  id: string;
  name: string;
  /** Minor units (cents). */
  price: number;
  currency: string;
  duration_days: number;
  traffic_limit_bytes: number | null;
  /** Issue 36: copied onto subscriptions bought or renewed with the plan (null: none / uncapped). */
  device_limit: ColumnType<number | null, number | null | undefined, number | null>;
  upload_bps: ColumnType<number | null, number | null | undefined, number | null>;
  download_bps: ColumnType<number | null, number | null | undefined, number | null>;
  /** What the plan includes, in the operator's words (shown on the portal's plan cards). */
  description: string | null;
  /** The traffic period of a subscription bought with the plan (subscriptions.renewal). */
  renewal: Generated<'no_reset' | 'day' | 'week' | 'month'>;
  archived: Generated<boolean>;
  created_at: Date;
  updated_at: Date;
}
export type PlanRow = Selectable<PlansTable>;

export interface PlanAccessGroupsTable {
  plan_id: string;
  access_group_id: string;
}

export interface PaymentProvidersTable {
  id: string;
  kind: string;
  name: string;
  enabled: Generated<boolean>;
  /** Non-secret settings. */
  config: Json<Record<string, unknown>>;
  /** Secret settings as JSON, encrypted with the installation key; never returned. */
  secrets_enc: string | null;
  created_at: Date;
  updated_at: Date;
}
export type PaymentProviderRow = Selectable<PaymentProvidersTable>;

export type PaymentStatus = 'pending' | 'succeeded' | 'failed' | 'expired' | 'canceled' | 'refunded';

export interface PaymentsTable {
  id: string;
  client_id: string;
  plan_id: string;
  provider_id: string;
  subscription_id: string | null;
  amount: number;
  currency: string;
  status: PaymentStatus;
  provider_payment_id: string | null;
  /** The checkout's Idempotency-Key: unique per client. */
  idempotency_key: string | null;
  /** SHA-256 of the checkout body the key came with (same key, other body: 422). */
  request_hash: string | null;
  /** When a request took on creating the provider's checkout (null: nobody is creating it). */
  checkout_started_at: Date | null;
  checkout_url: string | null;
  /** What the payer is told to do (manual providers). */
  instructions: string | null;
  /** When the provider stops taking this payment, when it said. */
  expires_at: Date | null;
  /** Why the status is what it is (failed, expired, canceled, refunded), in words. */
  status_reason: string | null;
  paid_at: Date | null;
  /** When the plan's effect was applied to the subscription (at most once). */
  applied_at: Date | null;
  /** When a refund took the effect back (at most once). */
  reverted_at: Date | null;
  /** What the application changed, so a refund can take exactly that back. */
  applied_effect: ColumnType<AppliedPaymentEffect | null, string | null, string | null>;
  /** When the worker re-reads this pending payment from its provider next. */
  next_check_at: Date | null;
  check_attempts: Generated<number>;
  created_at: Date;
  updated_at: Date;
}
export type PaymentRow = Selectable<PaymentsTable>;

/** What a succeeded payment did to its subscription (docs/payments.md, "What a payment buys"). */
export interface AppliedPaymentEffect {
  subscription_id: string;
  /** The subscription was made by this payment. */
  created: boolean;
  /** expires_at before and after (ISO; null: never). */
  expires_before: string | null;
  expires_after: string | null;
}

export interface PaymentEventsTable {
  id: string;
  provider_id: string;
  /** The provider's id of the event: unique per provider (a replay is stored once). */
  event_id: string;
  payment_id: string | null;
  provider_payment_id: string;
  status: string;
  amount: number | null;
  currency: string | null;
  occurred_at: Date | null;
  received_at: Date;
  processed_at: Date | null;
  outcome: string | null;
}
export type PaymentEventRow = Selectable<PaymentEventsTable>;

export interface DnsProvidersTable {
  id: string;
  kind: string;
  name: string;
  credentials_enc: string;
  created_at: Date;
  updated_at: Date;
}
export type DnsProviderRow = Selectable<DnsProvidersTable>;

export interface AcmeAccountsTable {
  id: string;
  email: string;
  directory_url: string;
  /** The account key (PEM), sealed; made by the first registration attempt and kept for its retries. */
  account_key_enc: string | null;
  /** The account's URL at the CA (its kid): set once the CA took the account. */
  account_url: string | null;
  /** External Account Binding {kid, hmac_key}, sealed, until the registration used it. */
  eab_enc: string | null;
  /** Why the last registration attempt failed, in words (null once registered). */
  registration_error: string | null;
  registered_at: Date | null;
  created_at: Date;
}
export type AcmeAccountRow = Selectable<AcmeAccountsTable>;
