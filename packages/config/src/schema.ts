import { z } from 'zod';

/**
 * The one description of the installation's static configuration. Keys mirror the spec's
 * names (auth.password_login, portal_auth.registration ...) so the config file, the docs and
 * the code use one vocabulary. Values come from an optional config file (YAML or JSON),
 * overlaid by environment variables (see env.ts); secrets come only from the environment.
 */

const oauthProvider = z.object({
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  issuer: z.url().optional(),
  authorization_endpoint: z.url().optional(),
  token_endpoint: z.url().optional(),
  userinfo_endpoint: z.url().optional(),
  scopes: z.array(z.string()).optional(),
});
export type OAuthProviderConfig = z.infer<typeof oauthProvider>;

const window = z.object({
  limit: z.number().int().positive(),
  window_seconds: z.number().int().positive(),
});
export type RateLimitWindow = z.infer<typeof window>;

const perIpAndSubject = (ip: RateLimitWindow, subject: RateLimitWindow) =>
  z.object({ per_ip: window.default(ip), per_subject: window.default(subject) }).default({ per_ip: ip, per_subject: subject });

export const configSchema = z.object({
  http: z
    .object({
      host: z.string().default('0.0.0.0'),
      port: z.number().int().min(0).max(65535).default(8080),
      /** Base of links handed to users (subscription URLs); defaults to http://localhost:{port}. */
      public_base_url: z.url().optional(),
      /** Take the client address from X-Forwarded-For (only behind a proxy you control). */
      trust_proxy: z.boolean().default(false),
      body_limit_bytes: z
        .number()
        .int()
        .positive()
        .default(1024 * 1024),
      /**
       * How long a portal process may answer GET /sub/{token} from memory (0 = read the
       * database on every request). Changes to a subscription, its client or its nodes drop
       * the cached answers at once (bus); this bounds only how stale the usage figures get.
       */
      sub_cache_seconds: z.number().int().min(0).max(3600).default(30),
      /**
       * The built admin panel (apps/admin-web's dist/), served at /admin/. Default: the
       * workspace's own build; the images set it to the copy they carry.
       */
      admin_web_dir: z.string().min(1).optional(),
      /**
       * The built customer portal (apps/portal-web's dist/), served at /portal/ beside
       * /portal/v1. Default: the workspace's own build; the images set it to their copy.
       */
      portal_web_dir: z.string().min(1).optional(),
      /**
       * The one-file agent (apps/agent's dist-one/: svc-agent-<version>.mjs and its .sha256),
       * served at /agent/ to the nodes that install it. Default: the workspace's own build.
       */
      agent_dist_dir: z.string().min(1).optional(),
    })
    .default({ host: '0.0.0.0', port: 8080, trust_proxy: false, body_limit_bytes: 1024 * 1024, sub_cache_seconds: 30 }),
  /** The agent gateway (apps/control-plane): one TLS port for Enroll and the mTLS Sync stream. */
  grpc: z
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
       * (packages/desired-state/src/member-cache.ts). ~350 bytes each.
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
    .default({
      host: '0.0.0.0',
      port: 8443,
      public_hosts: ['localhost', '127.0.0.1'],
      enroll_token_ttl_seconds: 24 * 3600,
      max_send_message_bytes: 256 * 1024 * 1024,
      max_receive_message_bytes: 16 * 1024 * 1024,
      idle_timeout_seconds: 95,
      command_timeout_seconds: 10,
      replica_heartbeat_seconds: 5,
      usage_ingest_concurrency: 2,
      gzip_level: 1,
      gzip_cache_mb: 64,
      gzip_min_bytes: 16 * 1024,
      member_cache_rows: 300_000,
      tls_session_lifetime_seconds: 7 * 86_400,
      admissions_per_second: 1000,
      admission_concurrency: 256,
      admission_max_wait_seconds: 20,
      listen_backlog: 16_384,
    }),
  /** Embedded PostgreSQL (PGlite) lives here when database.url is unset; also the installation key file. */
  data_dir: z.string().min(1).default('./data'),
  database: z.object({ url: z.string().min(1).optional(), pool_size: z.number().int().positive().default(10) }).default({ pool_size: 10 }),
  redis: z
    .object({
      url: z.string().min(1).optional(),
      /** Prefix of every key; give installations that share one Redis different prefixes. */
      key_prefix: z.string().min(1).max(64).default('svc:'),
    })
    .default({ key_prefix: 'svc:' }),
  /**
   * Prometheus scraping (docs/observability.md). `port`: a listener of its own that serves GET
   * /metrics and nothing else, on `host` (loopback by default; 0.0.0.0 in a container whose
   * port only the scraper reaches); unset: no such listener. `token`: every scrape must carry
   * it as `Authorization: Bearer <token>`, and with it /metrics is also served on the public
   * HTTP port; environment only. With neither, nothing serves metrics.
   */
  metrics: z
    .object({
      port: z.number().int().min(0).max(65_535).optional(),
      host: z.string().min(1).default('127.0.0.1'),
      token: z
        .string()
        .min(24, 'must be at least 24 characters (e.g. openssl rand -hex 32)')
        .max(256)
        .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without blanks')
        .optional(),
    })
    .default({ host: '127.0.0.1' }),
  log: z
    .object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') })
    .default({ level: 'info' }),
  /** 32 bytes, base64; encrypts secrets at rest. Generated into data_dir when absent. Environment only. */
  installation_key: z.string().optional(),
  /**
   * Where the installation key file is, instead of `<data_dir>/installation.key`: keep it off
   * the disk, volume or backup that holds the database (created there, mode 0600, on first
   * start when missing). Not a secret itself.
   */
  installation_key_file: z.string().min(1).optional(),
  auth: z
    .object({
      password_login: z.boolean().default(true),
      oauth: z.record(z.string().regex(/^[a-z0-9_-]+$/), oauthProvider).default({}),
      /**
       * Optional: where the OAuth callback sends the browser after sign-in (302), with the
       * token pair (or the error) in the URL fragment. Without it the callback answers JSON.
       */
      oauth_return_url: z.url().optional(),
      access_token_ttl_seconds: z
        .number()
        .int()
        .positive()
        .default(15 * 60),
      refresh_token_ttl_seconds: z
        .number()
        .int()
        .positive()
        .default(30 * 24 * 3600),
    })
    .default({ password_login: true, oauth: {}, access_token_ttl_seconds: 900, refresh_token_ttl_seconds: 2592000 }),
  portal_auth: z
    .object({
      registration: z.enum(['closed', 'application', 'open']).default('closed'),
      password_login: z.boolean().default(true),
      oauth: z.record(z.string().regex(/^[a-z0-9_-]+$/), oauthProvider).default({}),
      /** As auth.oauth_return_url, for the portal's OAuth callback. */
      oauth_return_url: z.url().optional(),
      /**
       * Where a magic link points: `{token}` is replaced by the one-time token. Default: the
       * portal web app's page {public_base_url}/portal/auth/magic-link#token={token} (the API's bare
       * page /portal/v1/auth/magic-link#token={token} does the same without the app), which signs
       * in only when the person presses its button (a mail scanner that opens links does not use
       * the token up; in the fragment it never reaches a server log). A front end of the
       * operator's posts the token to POST /portal/v1/auth/callback itself.
       */
      link_url: z
        .string()
        .url()
        .refine((u) => u.includes('{token}'), 'must contain {token}')
        .optional(),
    })
    .default({ registration: 'closed', password_login: true, oauth: {} }),
  mail: z
    .object({
      /** smtp:// or smtps://, with user:password when the server wants them. Environment only (it carries the password). */
      smtp_url: z
        .string()
        .min(1)
        .refine((v) => /^smtps?:\/\/[^/]/i.test(v), 'expected smtp://[user:password@]host[:port] or smtps://...')
        .optional(),
      from: z.string().min(1).max(320).default('svc <no-reply@localhost>'),
      /**
       * With no SMTP server: write every mail as an .eml file into <data_dir>/outbox and log it
       * (to, subject, file, text), so a fresh machine can be tried without a mail server.
       * Unset: on with the embedded database (one machine, all-in-one), off otherwise.
       * Ignored when smtp_url is set. See mailTransportOf.
       */
      outbox: z.boolean().optional(),
    })
    .default({ from: 'svc <no-reply@localhost>' }),
  /** Who hears of domain events (docs/notifications.md): mail to owners (and admins), webhooks. */
  notify: z
    .object({
      /**
       * Event types mailed to every owner; [] (SVC_NOTIFY_EMAIL_EVENTS=none) turns the mails off.
       * By default the three that wait for an owner or nobody hears of: a new customer, a
       * manual payment only an admin can confirm, and a node that failed to apply its desired
       * state (once per failed revision; it serves its old configuration until someone acts).
       */
      email_events: z
        .array(z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, 'an event type such as client.registered'))
        .default(['client.registered', 'payment.awaiting_confirmation', 'node.apply_failed']),
      /** Mail admins (role admin) as well as owners. */
      email_admins: z.boolean().default(false),
    })
    .default({ email_events: ['client.registered', 'payment.awaiting_confirmation', 'node.apply_failed'], email_admins: false }),
  /** ACME (docs/certificates.md). */
  acme: z
    .object({
      /**
       * A PEM file of CA certificates trusted for ACME directories besides the system's (a
       * private CA's directory, or a test CA). NODE_EXTRA_CA_CERTS works as well, for the whole process.
       */
      extra_ca_file: z.string().min(1).optional(),
      /**
       * How long issuance waits for a DNS-01 TXT value to show at the zone's authoritative
       * servers before it gives the attempt up (hosted DNS can take a minute or two).
       */
      propagation_timeout_seconds: z.number().int().min(5).max(3600).default(300),
      /**
       * The hosted DNS APIs' base URLs, for a proxy or a test stand-in (never set in a normal
       * installation: each adapter knows its provider's). Set by environment only.
       */
      dns_api_base_urls: z
        .object({ cloudflare: z.url().optional(), route53: z.url().optional(), digitalocean: z.url().optional() })
        .default({}),
    })
    .default({ propagation_timeout_seconds: 300, dns_api_base_urls: {} }),
  /** Where the server may connect on an admin's word (docs/threat-model.md, "Outbound calls"). */
  outbound: z
    .object({
      /**
       * Loopback and private networks as destinations of webhooks, ACME directories, DNS
       * providers, OAuth providers and payment APIs. Unset: the owner's installation setting
       * decides (PATCH /api/v1/settings/outbound, off by default); set, it overrides that setting.
       */
      allow_private_networks: z.boolean().optional(),
    })
    .default({}),
  /** Checkout, provider webhooks and re-reads (docs/payments.md). */
  billing: z
    .object({
      /**
       * Where a payer lands after the provider's page; `{payment_id}` is replaced. Default:
       * {public_base_url}/portal/payments/{payment_id} (the portal web app's page of the payment,
       * its status live); /portal/v1/checkout/return?payment_id={payment_id} is a bare page without script.
       */
      return_url: z.url().optional(),
      /**
       * The providers' API base URLs, for a proxy or a test stand-in (never set in a normal
       * installation: each adapter knows its provider's). Set by environment only.
       */
      api_base_urls: z.object({ stripe: z.url().optional(), cryptobot: z.url().optional(), yookassa: z.url().optional() }).default({}),
      /** A pending payment whose provider names no expiry is expired after this many hours (re-read once more first). */
      pending_max_hours: z
        .number()
        .int()
        .min(1)
        .max(24 * 30)
        .default(24),
      /** A pending manual payment (bank transfer) is expired after this many days unless an admin confirms it. */
      manual_max_days: z.number().int().min(1).max(365).default(7),
      /** How often the worker looks for pending payments due a re-read. */
      recheck_every_seconds: z.number().int().min(1).max(3600).default(60),
    })
    .default({ api_base_urls: {}, pending_max_hours: 24, manual_max_days: 7, recheck_every_seconds: 60 }),
  /** Scheduled backups by the worker (docs/backups.md); off until `dir` is set. */
  backup: z
    .object({
      /** Folder the archives are written to (on the worker's disk or a volume); unset: no scheduled backups. */
      dir: z.string().min(1).optional(),
      /** Hours between backups (the first runs when the worker starts). */
      every_hours: z
        .number()
        .int()
        .min(1)
        .max(24 * 31)
        .default(24),
      /** Archives kept: the newest this many (the newest is never removed). */
      keep: z.number().int().min(1).max(10_000).default(7),
      /** Archives older than this many days are removed, the newest excepted; 0: no age limit. */
      max_age_days: z.number().int().min(0).max(36_500).default(0),
      /**
       * A file whose first line is the passphrase that seals the installation key into each
       * archive; unset: archives hold no key (and cannot decrypt sealed secrets without it).
       */
      passphrase_file: z.string().min(1).optional(),
    })
    .default({ every_hours: 24, keep: 7, max_age_days: 0 }),
  password_hash: z
    .object({
      // OWASP's Argon2id minimum: m=19 MiB, t=2, p=1. Lower values are refused.
      memory_kib: z
        .number()
        .int()
        .min(19 * 1024)
        .default(19 * 1024),
      iterations: z.number().int().min(2).default(2),
      parallelism: z.number().int().min(1).default(1),
      /** Hashes computed at once; the rest queue. Default: cores - 1 (min 1), so a login flood never takes the event loop's core. */
      concurrency: z.number().int().positive().optional(),
      /** Hash requests allowed to wait; beyond that sign-in answers 503 at once instead of piling up. */
      max_queue: z.number().int().positive().default(256),
    })
    .default({ memory_kib: 19 * 1024, iterations: 2, parallelism: 1, max_queue: 256 }),
  rate_limits: z
    .object({
      /**
       * Password sign-in on both surfaces, each with its own counters (docs/architecture.md,
       * "Sign-in budgets"; docs/portal.md): per_ip counts every attempt of an address, whatever
       * the account; per_subject counts attempts per account *and* address, so a stranger spends
       * only their own budget; per_account counts attempts on an account from addresses that
       * never signed in to it (a many-address guesser), which addresses the account signed in
       * from before do not spend and are not refused by (a customer's: by password or magic link).
       */
      login: z
        .object({
          per_ip: window.default({ limit: 20, window_seconds: 60 }),
          per_subject: window.default({ limit: 10, window_seconds: 900 }),
          per_account: window.default({ limit: 100, window_seconds: 900 }),
        })
        .default({
          per_ip: { limit: 20, window_seconds: 60 },
          per_subject: { limit: 10, window_seconds: 900 },
          per_account: { limit: 100, window_seconds: 900 },
        }),
      refresh: perIpAndSubject({ limit: 60, window_seconds: 60 }, { limit: 30, window_seconds: 60 }),
      setup: perIpAndSubject({ limit: 10, window_seconds: 60 }, { limit: 10, window_seconds: 60 }),
      /** Enroll over gRPC, per agent IP and per token. */
      enroll: perIpAndSubject({ limit: 30, window_seconds: 60 }, { limit: 10, window_seconds: 60 }),
      /**
       * OAuth on both surfaces: the redirect and the callback per address; linking from
       * settings also per signed-in subject.
       */
      oauth: perIpAndSubject({ limit: 30, window_seconds: 60 }, { limit: 10, window_seconds: 60 }),
      /**
       * POST /portal/v1/auth/magic-link and /auth/callback (one budget per address for both:
       * a sign-in spends two; many customers may share one address behind a carrier NAT); the
       * link request also per email *and* address (refused with
       * 429, so a stranger spends only their own budget). `mails_per_email` bounds the mails one
       * address book entry receives from everyone together: past it the answer stays the same
       * and no mail is sent (a mailbox is not flooded; nobody is refused a sign-in for it, the
       * link already sent still works).
       */
      magic_link: z
        .object({
          per_ip: window.default({ limit: 30, window_seconds: 60 }),
          per_subject: window.default({ limit: 5, window_seconds: 900 }),
          mails_per_email: window.default({ limit: 10, window_seconds: 3600 }),
        })
        .default({
          per_ip: { limit: 10, window_seconds: 60 },
          per_subject: { limit: 5, window_seconds: 900 },
          mails_per_email: { limit: 10, window_seconds: 3600 },
        }),
      /** POST /portal/v1/auth/register, per address and per email. */
      register: perIpAndSubject({ limit: 10, window_seconds: 3600 }, { limit: 5, window_seconds: 3600 }),
      /** POST /portal/v1/checkout: new checkouts per client (a replay with its key is not counted). */
      checkout: window.default({ limit: 20, window_seconds: 3600 }),
    })
    .default({
      login: {
        per_ip: { limit: 20, window_seconds: 60 },
        per_subject: { limit: 10, window_seconds: 900 },
        per_account: { limit: 100, window_seconds: 900 },
      },
      refresh: { per_ip: { limit: 60, window_seconds: 60 }, per_subject: { limit: 30, window_seconds: 60 } },
      setup: { per_ip: { limit: 10, window_seconds: 60 }, per_subject: { limit: 10, window_seconds: 60 } },
      enroll: { per_ip: { limit: 30, window_seconds: 60 }, per_subject: { limit: 10, window_seconds: 60 } },
      oauth: { per_ip: { limit: 30, window_seconds: 60 }, per_subject: { limit: 10, window_seconds: 60 } },
      magic_link: {
        per_ip: { limit: 30, window_seconds: 60 },
        per_subject: { limit: 5, window_seconds: 900 },
        mails_per_email: { limit: 10, window_seconds: 3600 },
      },
      register: { per_ip: { limit: 10, window_seconds: 3600 }, per_subject: { limit: 5, window_seconds: 3600 } },
      checkout: { limit: 20, window_seconds: 3600 },
    }),
});

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
