/**
 * What an importer reads out of another panel's store (packages/importers), in one shape for
 * every source, before anything is written (docs/import.md). The readers only read and
 * translate; what becomes of each record (a client, a subscription, an inbound, a legacy link)
 * is the domain's to decide, once, for every source.
 */

export type ImportSourceKind = 'marzban' | 'marzneshin' | '3x-ui' | 'remnawave';

/** A user's state at the source, in the source's words where ours differ (on_hold: starts on first use). */
export type ImportedStatus = 'active' | 'disabled' | 'limited' | 'expired' | 'on_hold';

/** Reset strategies the sources know; `year` has no counterpart here (reported, kept as no_reset). */
export type ImportedRenewal = 'no_reset' | 'day' | 'week' | 'month' | 'year';

/** A user's proxy credentials exactly as the source holds them: never regenerated. */
export interface ImportedCredentials {
  vless?: { uuid: string; flow: string };
  vmess?: { uuid: string };
  trojan?: { password: string };
  shadowsocks?: { password: string; method: string };
}

export interface ImportedUser {
  /** The source's identity of the user, what a second import matches on (Marzban: the username, lower-cased). */
  key: string;
  /** The name the operator knew the user by. */
  username: string;
  /** What the source's subscription links name the user by, when they name it directly (3x-ui's subId); null otherwise. */
  linkKey: string | null;
  email: string | null;
  status: ImportedStatus;
  /** Traffic of the current period, and in all (the period's plus every earlier reset's). */
  usedBytes: number;
  lifetimeUsedBytes: number;
  /** null: unlimited. */
  trafficLimitBytes: number | null;
  renewal: ImportedRenewal;
  /** null: never. */
  expiresAt: Date | null;
  /** Starts on first use: the term that begins then, and the date it begins at the latest (null: only on use). */
  onHold: { durationSeconds: number; startsBy: Date | null } | null;
  credentials: ImportedCredentials;
  /** The source inbounds (by tag) the user is served on. */
  inboundTags: string[];
  note: string | null;
  createdAt: Date;
  /** When the source last revoked the user's links (tokens minted before it no longer open them). */
  linksRevokedAt: Date | null;
}

/** An inbound the source defines (Marzban's xray_config.json, 3x-ui's inbounds), as the source runs it. */
export interface ImportedInbound {
  tag: string;
  protocol: 'vless' | 'vmess' | 'trojan' | 'shadowsocks';
  port: number;
  listen: string | null;
  /** The source's stream settings (Xray JSON), translated by the domain when the inbound is imported. */
  streamSettings: Record<string, unknown> | null;
  /** Shadowsocks: the inbound's method, when the source sets one per inbound. */
  shadowsocksMethod: string | null;
  /** Shadowsocks 2022: the inbound's own key (the first half of every user's password in the links). */
  shadowsocksServerKey: string | null;
  /** The source's sniffing settings (Xray JSON), when it sets them. */
  sniffing: Record<string, unknown> | null;
}

/** Something at the source the import cannot carry, and why: what `--dry-run` lists. */
export interface ImportNotCarried {
  /** What it is: `user alice`, `inbound trojan-ws`, `user alice: renewal`. */
  what: string;
  why: string;
}

export interface ImportBatch {
  source: ImportSourceKind;
  /** What the source calls its own version (its schema revision), for the report. */
  sourceVersion: string | null;
  /** The secret that signed the source's subscription tokens (Marzban's jwt.secret_key), when its links are verified by it. */
  linkSecret: string | null;
  users: ImportedUser[];
  inbounds: ImportedInbound[];
  notCarried: ImportNotCarried[];
}
