import type { ColumnType, Generated, GeneratedAlways, Selectable } from 'kysely';

type Int8 = ColumnType<number, number | undefined, number>;

export type ClientStatus = 'pending' | 'active' | 'rejected' | 'disabled';

export interface ClientsTable {
  id: string;
  email: string;
  password_hash: string | null;
  email_verified_at: Date | null;
  status: ClientStatus;
  note: string | null;
  created_at: Date;
  updated_at: Date;
}
export type ClientRow = Selectable<ClientsTable>;

/** Addresses a client signed in from (password or magic link): they are not refused by the account-wide budget. */
export interface ClientKnownAddressesTable {
  client_id: string;
  /** SHA-256 of the address key (IPv4, or IPv6 /64). */
  address_hash: string;
  last_success_at: Date;
}

export type SubscriptionStatus = 'active' | 'limited' | 'expired' | 'disabled';
export type Renewal = 'no_reset' | 'day' | 'week' | 'month';

export interface SubscriptionsTable {
  id: string;
  client_id: string;
  status: SubscriptionStatus;
  traffic_limit_bytes: number | null;
  /** Issue 36: distinct client addresses at once (null: no limit); speed caps in bits per second (null: uncapped). */
  device_limit: ColumnType<number | null, number | null | undefined, number | null>;
  upload_bps: ColumnType<number | null, number | null | undefined, number | null>;
  download_bps: ColumnType<number | null, number | null | undefined, number | null>;
  expires_at: Date | null;
  /** A term that starts on first use (expires_at null meanwhile): the first traffic credited sets expires_at = then + this. */
  starts_on_first_use_seconds: ColumnType<number | null, number | null | undefined, number | null>;
  /** With a term that starts on first use: it starts at this moment at the latest (null: only on use). */
  start_by: ColumnType<Date | null, Date | null | undefined, Date | null>;
  renewal: Generated<Renewal>;
  period_started_at: Date;
  vless_uuid: string;
  vmess_uuid: string;
  trojan_password: string;
  shadowsocks_password: string;
  /** SHA-256 of the link token: /sub/{token} looks it up by this. */
  token_hash: string;
  /** The link token itself, encrypted with the installation key, to show the link again. */
  token_enc: string;
  credentials_rotated_at: Date | null;
  plan_id: string | null;
  note: string | null;
  created_at: Date;
  updated_at: Date;
  /**
   * Issue 37.2 (generated, never written): a 64-bit hash of what a node's config takes from the
   * row (int8 as text), and the gateway member cache's bucket (0..255) from the id.
   */
  member_hash: GeneratedAlways<string>;
  bucket: GeneratedAlways<number>;
}
export type SubscriptionRow = Selectable<SubscriptionsTable>;

/**
 * A subscription's traffic counters, a narrow row of their own (issue 37.1: the usage ingest
 * rewrites them for every subscription a report names; migration 2026-12-02T1400). Every
 * subscription has one from its insert on (a trigger adds it; the foreign key's cascade removes it).
 */
export interface SubscriptionCountersTable {
  subscription_id: string;
  /** Traffic in the current renewal period. */
  used_bytes: Int8;
  /** This period's traffic each way (used_bytes is their sum as credited by the usage ingest). */
  period_uplink_bytes: Int8;
  period_downlink_bytes: Int8;
  lifetime_used_bytes: Int8;
}
export type SubscriptionCountersRow = Selectable<SubscriptionCountersTable>;

export interface SubscriptionAccessGroupsTable {
  subscription_id: string;
  access_group_id: string;
}

export interface UsageHourlyTable {
  subscription_id: string;
  node_id: string;
  hour: Date;
  /** Charged: the node's raw bytes times its traffic_multiplier, what the subscription is counted. */
  uplink_bytes: Int8;
  downlink_bytes: Int8;
  /** What the node reported (issue 35.4); null on rows from before multipliers, whose raw bytes are the charged ones. */
  raw_uplink_bytes: ColumnType<number | null, number | null | undefined, number | null>;
  raw_downlink_bytes: ColumnType<number | null, number | null | undefined, number | null>;
}

/**
 * A usage report staged (issue 37.1), one row per part: acknowledged, not yet credited. The fold
 * (domain agents/usage-fold.ts) credits it and deletes it in one transaction.
 */
export interface UsageInboxTable {
  node_id: string;
  /** int8: read as text (a report id may exceed what a JS number holds). */
  report_id: ColumnType<string, string | bigint, never>;
  /** 0-15, of the subscription ids (usagePart): a report is one row per part it has entries in. */
  part: ColumnType<number, number, never>;
  received_at: Date;
  /** The node's traffic multiplier when the report arrived, as stored (numeric, as text). */
  multiplier: ColumnType<string, string, never>;
  entries: number;
  ids: ColumnType<string[], string[], never>;
  /** int8[]: as text. */
  uplink: ColumnType<string[], string[], never>;
  downlink: ColumnType<string[], string[], never>;
}
