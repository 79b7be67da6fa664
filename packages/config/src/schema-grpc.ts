import { z } from 'zod';

/** The agent gateway (apps/control-plane): one TLS port for Enroll and the mTLS Sync stream. */
export const grpcSection = z
  .object({
    host: z.string().default('0.0.0.0'),
    port: z.number().int().min(0).max(65535).default(8443),
    /** Names and addresses agents dial; they go into the server certificate (signed by the internal CA). */
    public_hosts: z.array(z.string().min(1)).min(1).default(['localhost', '127.0.0.1']),
    /** host:port handed to agents with an enrollment token; default: the first public host and grpc.port. */
    public_endpoint: z.string().min(1).optional(),
    /**
     * The lowest svc-agent version served (opt-in, unset by default): an agent naming a lower
     * semver is refused at Enroll and Sync with FAILED_PRECONDITION, after its token or
     * certificate was checked. Every agent that speaks svc.controlplane.v1 is served without it
     * (spec 9.3); outdated ones are flagged (docs/agent.md, "Versions").
     */
    min_agent_version: z
      .string()
      .regex(/^\d{1,9}\.\d{1,9}\.\d{1,9}$/, 'a version such as 0.2.0')
      .optional(),
    /** How long an enrollment token stays valid. */
    enroll_token_ttl_seconds: z
      .number()
      .int()
      .min(60)
      .max(30 * 24 * 3600)
      .default(24 * 3600),
    /** Largest message the gateway sends (a DesiredState of a big node); agents must accept at least this much. */
    max_send_message_bytes: z
      .number()
      .int()
      .min(4 * 1024 * 1024)
      .default(256 * 1024 * 1024),
    /**
     * Largest message the gateway accepts on an authenticated Sync (a UsageReport of every
     * subscription of a node: ~48 bytes an entry, 100,000 are ~4.8 MiB). Enroll, open to
     * anyone, takes 16 KiB (docs/agent-gateway.md, "Limits for agent authors").
     */
    max_receive_message_bytes: z
      .number()
      .int()
      .min(1024 * 1024)
      .default(16 * 1024 * 1024),
    /** Seconds without any message after which a stream counts as dead (status arrives every 30 s). */
    idle_timeout_seconds: z.number().int().min(35).default(95),
    /** How long the admin API waits for an agent's answer (a log snapshot) before a 504. */
    command_timeout_seconds: z.number().int().min(1).max(300).default(10),
    /** Each gateway replica proves it is alive this often; one silent for 4 periods is dead and its nodes go offline. */
    replica_heartbeat_seconds: z.number().int().min(1).max(60).default(5),
    /** Usage reports applied at once per gateway process; more wait (wider thrashes the database, bench/BENCHMARKS.md). */
    usage_ingest_concurrency: z.number().int().min(1).max(64).default(2),
    /**
     * Usage entries one fold credits in one transaction (staged reports, oldest first, at least
     * one): larger folds write a subscription reported several times once, and hold its row longer.
     */
    usage_fold_max_entries: z.number().int().min(1000).max(10_000_000).default(100_000),
    /** Folds of staged usage run at once per gateway process (each on its own nodes and database connection). */
    usage_fold_concurrency: z.number().int().min(1).max(16).default(2),
    /**
     * Usage entries staged and not yet credited above which a report is acknowledged only once
     * the fold has brought the backlog under it again (agents keep unacknowledged reports). Under
     * a load the folds cannot credit a write an entry, the backlog is what lets a part gather
     * several reports of each subscription: 4,000,000 is 40 s of a million users reporting every
     * 10 s (about 60 B staged an entry: some 240 MB at the limit).
     */
    usage_inbox_max_entries: z.number().int().min(10_000).max(100_000_000).default(4_000_000),
    /**
     * gzip level of messages the gateway sends (0 = off): DesiredStates of at least
     * grpc.gzip_min_bytes go compressed to agents that accept gzip (a 14.5 MiB 100,000-user snapshot
     * becomes ~5 MiB at level 1; bench/BENCHMARKS.md).
     */
    gzip_level: z.number().int().min(0).max(9).default(1),
    /**
     * Deflated pieces of big DesiredStates the gateway keeps (MiB, 0 = none): a change of
     * one user of a 100,000-user node deflates the few pieces that changed instead of the
     * whole 14.5 MiB (apps/control-plane/src/cached-gzip.ts). ~4.5 MiB per such node.
     */
    gzip_cache_mb: z.number().int().min(0).max(4096).default(64),
    /**
     * The same pieces kept on disk in <data_dir>/gzip-pieces (MiB, 0 = none), so a restarted
     * gateway's first push of a big node deflates only what changed while it was down
     * (apps/control-plane/src/gzip-piece-store.ts). Oldest written go first past the bound.
     */
    gzip_disk_mb: z.number().int().min(0).max(65536).default(256),
    /**
     * The last DesiredState sent to each big node (10,000 users or more), encoded, kept on disk in
     * <data_dir>/last-push (MiB, 0 = none): the first push after a restart to a node whose
     * revision has not moved is those bytes, not a read and compile of every member
     * (apps/control-plane/src/last-push-store.ts). ~19 MiB for 100,000 users on two inbounds;
     * oldest written go first past the bound.
     */
    last_push_disk_mb: z.number().int().min(0).max(65536).default(1024),
    /**
     * Smallest message the gateway gzips. Deflating costs ~0.2 ms of CPU a message whatever
     * its size (zlib's state is set up per message), the agent ~0.04 ms to inflate it: for a
     * 1 KiB DesiredState that was most of a fan-out's CPU per node, for a saving of a few
     * hundred bytes. 16 KiB: a node of ~200 users and more.
     */
    gzip_min_bytes: z
      .number()
      .int()
      .min(0)
      .max(256 * 1024 * 1024)
      .default(16 * 1024),
    /**
     * Members of big access groups (2,000 and more) the gateway keeps between snapshots
     * (0 = none): a change reads again only the buckets of members that changed
     * (packages/desired-state/src/member-cache.ts). ~350 bytes each. Also the bound of the
     * traffic slices of big nodes kept the same way (slice-cache.ts, ~150 bytes each).
     */
    member_cache_rows: z.number().int().min(0).max(50_000_000).default(300_000),
    /**
     * How long an agent may resume its TLS session (a ticket, keys derived from the
     * installation key: any replica, and a restarted one, accepts it), counted from the full
     * handshake that issued it; at most 7 days (TLS 1.3). 0 = full handshakes only.
     */
    tls_session_lifetime_seconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .default(7 * 86_400),
    /**
     * Sync streams admitted per second per gateway process (token bucket, a tenth of a
     * second's worth of burst): after a restart the whole fleet reconnects at once; the rest
     * wait in line, in order of arrival. Only agents whose certificate verified can take a
     * place in line. 1,000: a 10,000-node fleet is through the line in 10 s, half the longest
     * wait (500 held a storm the gateway's CPU could already serve; bench:reconnect-storm).
     */
    admissions_per_second: z.number().int().min(1).max(100_000).default(1000),
    /**
     * Admissions in progress at once per gateway process (the database work of a stream's
     * opening). The openings of one turn go to the database as one statement, at most two at
     * a time (stream-openings.ts), so this bounds the batch, not the connections: 64 allowed
     * ~210 admissions a second when a batched statement took ~0.3 s under a storm's load.
     */
    admission_concurrency: z.number().int().min(1).max(1024).default(256),
    /**
     * Longest wait in line: an agent whose turn would come later is answered UNAVAILABLE at
     * once with `grpc-retry-pushback-ms`, when its turn would come, and comes back then.
     */
    admission_max_wait_seconds: z.number().int().min(1).max(600).default(20),
    /**
     * The listen backlog of the agent port: connections the kernel completes before the
     * gateway accepts them. Node's default (511) overflows when thousands of agents reconnect
     * at once (a dropped SYN comes back after 1, 3, 7, 15 ... s); Linux caps it at
     * net.core.somaxconn.
     */
    listen_backlog: z.number().int().min(1).max(65_535).default(16_384),
  })
  .prefault({});
