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

export type PaymentStatus = 'pending' | 'succeeded' | 'failed' | 'canceled' | 'refunded';

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
  idempotency_key: string | null;
  checkout_url: string | null;
  created_at: Date;
  updated_at: Date;
}
export type PaymentRow = Selectable<PaymentsTable>;

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
  account_key_enc: string | null;
  account_url: string | null;
  created_at: Date;
}
export type AcmeAccountRow = Selectable<AcmeAccountsTable>;
