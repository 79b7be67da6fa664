import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Renewal } from './customers.ts';
import type { StoredStream } from './inbound-stream.ts';

type Json<T> = ColumnType<T, string, string>;
type Int8 = ColumnType<number, number | undefined, number>;

export type AdminStatus = 'enabled' | 'disabled';
export type Connectivity = 'online' | 'offline';

export interface NodesTable {
  id: string;
  name: string;
  address: string;
  admin_status: Generated<AdminStatus>;
  connectivity: Generated<Connectivity>;
  desired_revision: Int8;
  applied_revision: Int8;
  last_apply_error: string | null;
  /** The revision the agent last failed to apply, until one at or past it applies. */
  apply_failed_revision: ColumnType<number | null, number | null | undefined, number | null>;
  /** When the node's current run of failed applies began (the first failure after a success). */
  apply_failing_since: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The engine version (Hello's) the desired state is compiled for; null: not reported yet (current Xray). */
  compiled_engine_version: ColumnType<string | null, string | null | undefined, string | null>;
  last_seen_at: Date | null;
  agent_version: string | null;
  xray_version: string | null;
  hostname: string | null;
  os: string | null;
  arch: string | null;
  /** The last StatusReport, snake_case. */
  status: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  last_usage_report_id: Int8;
  enroll_token_hash: string | null;
  enroll_token_expires_at: Date | null;
  stream_replica: string | null;
  stream_session: string | null;
  stream_opened_at: Date | null;
  cert_serial: string | null;
  cert_previous_serial: string | null;
  cert_not_after: Date | null;
  last_status_at: Date | null;
  last_apply_at: Date | null;
  usage_entries_dropped: Generated<Int8>;
  /** The agent release an upgrade was last asked for (issue 31), and how it went. */
  agent_upgrade_version: ColumnType<string | null, string | null | undefined, string | null>;
  agent_upgrade_command_id: ColumnType<string | null, string | null | undefined, string | null>;
  agent_upgrade_state: ColumnType<AgentUpgradeState | null, AgentUpgradeState | null | undefined, AgentUpgradeState | null>;
  agent_upgrade_error: ColumnType<string | null, string | null | undefined, string | null>;
  agent_upgrade_requested_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  agent_upgrade_finished_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** What node.online / node.offline last announced (issue 35.2); null: nothing yet. */
  presence_announced: ColumnType<'online' | 'offline' | null, 'online' | 'offline' | null | undefined, 'online' | 'offline' | null>;
  /**
   * Issue 35.4: what the node's usage charges to subscriptions per byte it reports (0 to 100,
   * numeric(7,4): read as text, e.g. '2.0000').
   */
  traffic_multiplier: ColumnType<string, string | undefined, string>;
  /** Raw bytes the node may carry per traffic_quota_renewal period; null: no quota. */
  traffic_quota_bytes: ColumnType<number | null, number | null | undefined, number | null>;
  traffic_quota_renewal: ColumnType<Renewal, Renewal | undefined, Renewal>;
  /** Raw bytes credited from the node's reports since traffic_period_started_at. */
  traffic_period_bytes: Int8;
  traffic_period_started_at: ColumnType<Date, Date | undefined, Date>;
  /** Since when the node is limited by its quota (its inbounds out of service); null: it is not. */
  traffic_limited_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** All time: raw bytes the node carried for subscriptions, and the bytes that charged them. */
  traffic_raw_bytes: Int8;
  traffic_charged_bytes: Int8;
  /** Issue 36: StatusReport.enforcement as last reported (snake_case, with reported_at); null: never reported (an older agent). */
  enforcement: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** The last CutoffReport.report_id recorded (exactly once, as last_usage_report_id). */
  last_cutoff_report_id: Int8;
  /** The last traffic slice id granted on the node (limits/traffic-slices.ts): each grant takes the next. */
  last_slice_id: Int8;
  created_at: Date;
  updated_at: Date;
}
export type AgentUpgradeState = 'pending' | 'succeeded' | 'failed';
export type NodeRow = Selectable<NodesTable>;

export interface GatewayReplicasTable {
  id: string;
  hostname: string;
  started_at: Date;
  heartbeat_at: Date;
}

/** A certificate's new material on its way to a node: node.certificate_served once the node applied `revision`. */
export interface CertificateRolloutsTable {
  certificate_id: string;
  node_id: string;
  revision: Int8;
  not_after: Date;
  created_at: Date;
}

export interface CertificatesTable {
  id: string;
  name: string | null;
  kind: 'uploaded' | 'acme';
  status: Generated<string>;
  domains: Json<string[]>;
  cert_pem: string | null;
  key_pem_enc: string | null;
  issuer: string | null;
  not_before: Date | null;
  not_after: Date | null;
  acme_account_id: string | null;
  dns_provider_id: string | null;
  last_error: string | null;
  /** The not_after an expiry announcement (certificate.expiring) was made for. */
  expiry_announced_for: Date | null;
  /** ACME: the claim of the worker issuing now (stale after 15 minutes). */
  issuing_since: Date | null;
  /** ACME: when the next attempt is due (first issuance, a retry after backoff, the renewal). */
  next_attempt_at: Date | null;
  /** ACME: a forced renewal asked for (POST /certificates/{id}/renew) and not yet attempted. */
  renew_requested_at: Date | null;
  failed_attempts: Generated<number>;
  last_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}
export type CertificateRow = Selectable<CertificatesTable>;

export type Protocol = 'vless' | 'vmess' | 'trojan' | 'shadowsocks';

export interface InboundProfilesTable {
  id: string;
  name: string;
  protocol: Protocol;
  /** {network, security, tcp|ws|grpc|httpupgrade|xhttp, tls|reality} without the REALITY private key (inbound-stream.ts). */
  stream: Json<StoredStream>;
  sniffing: Json<{ enabled: boolean; dest_override: string[]; route_only: boolean }>;
  vless_flow: string | null;
  shadowsocks_method: string | null;
  /** Shadowsocks 2022 only: the inbound's server key (base64, 16 or 32 bytes), part of every user's password. */
  shadowsocks_server_key: string | null;
  block_bittorrent: Generated<boolean>;
  reality_private_key_enc: string | null;
  certificate_id: string | null;
  created_at: Date;
  updated_at: Date;
}
export type InboundProfileRow = Selectable<InboundProfilesTable>;

export interface ChainsTable {
  id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}
export interface ChainHopsTable {
  chain_id: string;
  position: number;
  node_id: string;
  port: number;
  /** Credential the previous hop presents to this hop's chain-in (generated, internal). */
  secret: string;
}

export interface InboundsTable {
  id: string;
  node_id: string;
  profile_id: string;
  tag: string;
  port: number;
  listen: string | null;
  host: string | null;
  chain_id: string | null;
  created_at: Date;
  updated_at: Date;
}
export type InboundRow = Selectable<InboundsTable>;

export interface AccessGroupsTable {
  id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}
export interface AccessGroupInboundsTable {
  access_group_id: string;
  inbound_id: string;
}

/** A node stopped carrying an access group; its members' usage from it is still credited until `until`. */
export interface NodeGroupGraceTable {
  node_id: string;
  access_group_id: string;
  until: Date;
}

/** A subscription left an access group; its usage from the group's nodes is still credited until `until`. */
export interface SubscriptionGroupGraceTable {
  subscription_id: string;
  access_group_id: string;
  until: Date;
}

/** Issue 36: the traffic slice a node may carry for a subscription while the control plane is away (limits/traffic-slices.ts). */
export interface TrafficSlicesTable {
  node_id: string;
  subscription_id: string;
  /** The node's next nodes.last_slice_id: a new grant on the node always has a higher id. */
  slice_id: ColumnType<string, string | number, string | number>;
  /** Raw bytes (as the node counts them). */
  slice_bytes: ColumnType<string, string | number, string | number>;
  /** Raw bytes the node reported for the subscription since the grant. */
  used_bytes: ColumnType<string, string | number | undefined, string | number>;
  granted_at: Date;
}

/** Issue 36: a user an agent cut on its own (CutoffReport). */
export interface NodeCutoffsTable {
  node_id: string;
  subscription_id: string;
  report_id: ColumnType<string, string | number, string | number>;
  /** The entry's position in its report (the key is node_id, report_id, entry). */
  entry: number;
  reason: 'time' | 'slice';
  cut_at: Date;
  slice_id: ColumnType<string, string | number, string | number>;
  slice_used_bytes: ColumnType<string, string | number, string | number>;
  recorded_at: Date;
}
