import type { Config } from '@svc/config';
import type { AdmissionLimits } from './admission-line.ts';
import { ENROLL_MAX_BYTES } from './inbound-guard.ts';
import type { RegistryTiming } from './stream-registry.ts';

/** Everything the gateway runs with, read from the configuration's grpc.* once (gatewayOptions). */
export interface GatewayOptions {
  host: string;
  port: number;
  /** Names and addresses agents dial; they go into the server certificate. */
  tlsHosts: readonly string[];
  /** Largest message sent (a big node's DesiredState). */
  maxSendMessageBytes: number;
  /** Largest message accepted on an authenticated Sync (a usage report; inbound-guard.ts). */
  maxReceiveMessageBytes: number;
  /** Largest Enroll message (no client certificate): ENROLL_MAX_BYTES; other values only to measure (bench). */
  maxEnrollMessageBytes: number;
  /** A stream without any message for this long is ended (status arrives every 30 s). */
  idleTimeoutMs: number;
  /** How long an opened stream may take to say Hello (default: the service's). */
  helloTimeoutMs?: number;
  timing: RegistryTiming;
  /** gzip level of sent messages, 0 = off; messages below gzipMinBytes go plain; deflated pieces kept up to gzipCacheBytes. */
  gzipLevel: number;
  gzipMinBytes: number;
  gzipCacheBytes: number;
  /** Deflated pieces kept on disk across restarts (gzip-piece-store.ts), 0 = none. */
  gzipDiskBytes: number;
  /** The last DesiredState of each big node kept on disk across restarts (last-push-store.ts), 0 = none. */
  lastPushDiskBytes: number;
  /** How long a big node's newest message waits for the node to stay unchanged before it is written (10 s; other values only for tests). */
  lastPushQuietMs: number;
  /** Members of big access groups kept between snapshots (0 = no member cache). */
  memberCacheRows: number;
  /** Usage reports staged at once. */
  usageIngestConcurrency: number;
  /** Staged usage: entries a fold credits in one transaction, and the backlog above which acknowledgements wait for the fold. */
  usageFold: { maxEntries: number; inboxMaxEntries: number; concurrency: number };
  /** TLS session ticket lifetime, 0 = no resumption. */
  tlsSessionLifetimeSeconds: number;
  admission: AdmissionLimits;
  /** Listen backlog of the port (Linux caps it at net.core.somaxconn). */
  listenBacklog: number;
}

/** The gateway's options from grpc.* (packages/config schema-grpc.ts): the one place that reads them. */
export function gatewayOptions(g: Config['grpc']): GatewayOptions {
  return {
    host: g.host,
    port: g.port,
    tlsHosts: g.public_hosts,
    maxSendMessageBytes: g.max_send_message_bytes,
    maxReceiveMessageBytes: g.max_receive_message_bytes,
    maxEnrollMessageBytes: ENROLL_MAX_BYTES,
    idleTimeoutMs: g.idle_timeout_seconds * 1000,
    timing: {
      heartbeatMs: g.replica_heartbeat_seconds * 1000,
      reconcileMs: g.replica_heartbeat_seconds * 1000,
      staleAfterMs: g.replica_heartbeat_seconds * 4000,
    },
    gzipLevel: g.gzip_level,
    gzipMinBytes: g.gzip_min_bytes,
    gzipCacheBytes: g.gzip_cache_mb * 1024 * 1024,
    gzipDiskBytes: g.gzip_disk_mb * 1024 * 1024,
    lastPushDiskBytes: g.last_push_disk_mb * 1024 * 1024,
    lastPushQuietMs: 10_000,
    memberCacheRows: g.member_cache_rows,
    usageIngestConcurrency: g.usage_ingest_concurrency,
    usageFold: { maxEntries: g.usage_fold_max_entries, inboxMaxEntries: g.usage_inbox_max_entries, concurrency: g.usage_fold_concurrency },
    tlsSessionLifetimeSeconds: g.tls_session_lifetime_seconds,
    admission: {
      perSecond: g.admissions_per_second,
      concurrency: g.admission_concurrency,
      maxWaitMs: g.admission_max_wait_seconds * 1000,
    },
    listenBacklog: g.listen_backlog,
  };
}
