import { z } from 'zod';
import { grpcSection } from './schema-grpc.ts';
import { httpSection } from './schema-http.ts';
import { authSection, passwordHashSection, portalAuthSection, rateLimitsSection } from './schema-sign-in.ts';

/**
 * The one description of the installation's static configuration. Keys mirror the spec's
 * names (auth.password_login, portal_auth.registration ...) so the config file, the docs and
 * the code use one vocabulary. Values come from an optional config file (YAML or JSON),
 * overlaid by environment variables (see env.ts); secrets come only from the environment.
 */

export const configSchema = z.object({
  http: httpSection,
  grpc: grpcSection,
  /** Embedded PostgreSQL (PGlite) lives here when database.url is unset; also the installation key file. */
  data_dir: z.string().min(1).default('./data'),
  database: z.object({ url: z.string().min(1).optional(), pool_size: z.number().int().positive().default(10) }).prefault({}),
  redis: z
    .object({
      url: z.string().min(1).optional(),
      /** Prefix of every key; give installations that share one Redis different prefixes. */
      key_prefix: z.string().min(1).max(64).default('svc:'),
    })
    .prefault({}),
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
    .prefault({}),
  log: z.object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') }).prefault({}),
  /** 32 bytes, base64; encrypts secrets at rest. Generated into data_dir when absent. Environment only. */
  installation_key: z.string().optional(),
  /**
   * Where the installation key file is, instead of `<data_dir>/installation.key`: keep it off
   * the disk, volume or backup that holds the database (created there, mode 0600, on first
   * start when missing). Not a secret itself.
   */
  installation_key_file: z.string().min(1).optional(),
  auth: authSection,
  portal_auth: portalAuthSection,
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
    .prefault({}),
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
      /**
       * How long a node's agent may be away before node.offline is raised (an agent that
       * reconnects sooner, after a restart or a network blip, raises nothing). Default 2 minutes.
       */
      node_offline_grace_seconds: z.number().int().min(10).max(86_400).default(120),
    })
    .prefault({}),
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
        .prefault({}),
    })
    .prefault({}),
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
    .prefault({}),
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
      api_base_urls: z.object({ stripe: z.url().optional(), cryptobot: z.url().optional(), yookassa: z.url().optional() }).prefault({}),
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
    .prefault({}),
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
    .prefault({}),
  password_hash: passwordHashSection,
  rate_limits: rateLimitsSection,
});

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
