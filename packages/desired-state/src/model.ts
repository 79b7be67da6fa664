import type { ClientStatus, Protocol, SubscriptionStatus } from '@svc/db';
import type { EngineCapabilities, InboundProfileStream as StoredStream } from '@svc/domain';

/**
 * Everything one node's configuration depends on, read in one consistent snapshot of the
 * database (load-model.ts). The compiler (compile.ts) is a pure function of this.
 */
export interface NodeModel {
  node_id: string;
  revision: number;
  /** The clock reading the snapshot was taken with (a subscription past its expiry serves nobody). */
  now: Date;
  /**
   * What the node's engine accepts (engineOf its compiled_engine_version, read with the
   * revision): changes only together with a new revision, so a revision always compiles alike.
   */
  engine: EngineCapabilities;
  inbounds: ModelInbound[];
  /** Subscriptions granted any inbound of this node, with the ids of those inbounds (in no particular order: the compiler orders users). */
  subscriptions: ModelSubscription[];
  /** Chains this node is a hop of, or whose entry inbounds it runs. */
  chains: ModelChain[];
  /** TLS certificates referenced by this node's inbounds (key in clear: the snapshot goes to the node). */
  certificates: Array<{ id: string; cert_pem: string; key_pem: string }>;
  /**
   * Issue 36: the traffic slices granted on this node, by subscription id (traffic_slices; granted
   * before the snapshot by grantTrafficSlices). Absent or missing for a subscription: unmetered here.
   */
  slices?: ReadonlyMap<string, ModelSlice>;
}

/** A traffic slice: the node may carry slice_bytes (raw) for the subscription under slice_id (int8 as text). */
export interface ModelSlice {
  slice_id: string;
  slice_bytes: string;
}

export interface ModelInbound {
  id: string;
  tag: string;
  port: number;
  listen: string | null;
  chain_id: string | null;
  protocol: Protocol;
  stream: StoredStream;
  /** Opened REALITY private key, when security is reality. */
  reality_private_key: string | null;
  sniffing: { enabled: boolean; dest_override: string[]; route_only: boolean };
  vless_flow: string | null;
  shadowsocks_method: string | null;
  /** Shadowsocks 2022: the inbound's server key (every user password is `<server key>:<user key>`). */
  shadowsocks_server_key: string | null;
  block_bittorrent: boolean;
}

/**
 * A member as the compiler reads it. Never changed once made: the member cache keeps a bucket's
 * objects from snapshot to snapshot (a changed member is a new object), and the compiler keeps
 * what it derives from one by identity (compile.ts userLimitsOf).
 */
export interface ModelSubscription {
  id: string;
  status: SubscriptionStatus;
  traffic_limit_bytes: number | null;
  expires_at: Date | null;
  /** Issue 36: live limits (NodeConfig.user_limits); null: none / uncapped. Absent: none. */
  device_limit?: number | null;
  upload_bps?: number | null;
  download_bps?: number | null;
  client_status: ClientStatus;
  /** Credentials; the loader reads only those of protocols the node runs (the others are ''). */
  vless_uuid: string;
  vmess_uuid: string;
  trojan_password: string;
  shadowsocks_password: string;
  inbound_ids: string[];
  /**
   * The row it was made from, when that row is kept by the member cache (the same object while
   * the member's row is unchanged, whichever node's model is made from it): what encoded runs
   * are kept by (encode-desired-state.ts). Absent: the model itself stands for it.
   */
  source?: object;
}

export interface ModelChain {
  id: string;
  hops: Array<{ position: number; node_id: string; address: string; port: number; secret: string }>;
}
