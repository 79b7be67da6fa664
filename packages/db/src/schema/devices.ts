import type { Generated, Selectable } from 'kysely';

/** A device registered by the HWID headers of GET /sub/{token} (issue 36). */
export interface SubscriptionDevicesTable {
  id: string;
  subscription_id: string;
  /** x-hwid as the app sent it (1 to 128 visible ASCII characters). */
  hwid: string;
  /** x-device-os, x-ver-os, x-device-model and User-Agent of the last fetch (null: not sent). */
  os: string | null;
  os_version: string | null;
  model: string | null;
  user_agent: string | null;
  first_seen_at: Date;
  last_seen_at: Date;
}
export type SubscriptionDeviceRow = Selectable<SubscriptionDevicesTable>;

/** A client address on a user's live connections at a node, from its last DeviceReport (issue 36). */
export interface SubscriptionOnlineAddressesTable {
  subscription_id: string;
  node_id: string;
  /** IPv4, or an IPv6 /64 written `2001:db8:1:2::/64` (@svc/proto deviceAddress). */
  address: string;
  first_seen_at: Date;
  /** Since when the node's reports list it; for a row no longer listed (held while refused), when they stopped. */
  seen_at: Date;
  /** False: the node's last report no longer lists it (kept only while refused, for the hold). */
  listed: Generated<boolean>;
  /** When the fleet-wide device count refused this address (null: allowed). */
  denied_at: Date | null;
}
