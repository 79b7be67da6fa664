import { createSharedState, type SharedStateAdapters } from '@svc/bus';
import type { Config } from '@svc/config';
import { connectDatabase, type DatabaseHandle, migrateToLatest } from '@svc/db';
import {
  allowPrivateNetworks,
  type Clock,
  createDomainDeps,
  type DomainDeps,
  loadInstallationKey,
  type Mailer,
  systemClock,
} from '@svc/domain';
import { type AppName, createMetrics, type Metrics } from '@svc/metrics';
import { createOutboundClient, type HostLookup } from '@svc/outbound';
import { createVendors } from '@svc/providers';
import type { Logger } from 'pino';
import { createLogger } from './logger.ts';
import { createMailer } from './mail/create-mailer.ts';

export interface Runtime {
  config: Config;
  deps: DomainDeps;
  database: DatabaseHandle;
  shared: SharedStateAdapters;
  /** Where `mail.send` jobs go (SMTP, the outbox folder, or nowhere): the worker uses it. */
  mailer: Mailer;
  log: Logger;
  /** This process's Prometheus registry and instruments (also deps.metrics). */
  metrics: Metrics;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  clock?: Clock;
  log?: Logger;
  /** An already open database (tests hand in a PGlite clone or a schema). */
  database?: DatabaseHandle;
  /** Key prefix for Redis, over config.redis.key_prefix (tests isolate by prefix). */
  redisKeyPrefix?: string;
  /** Run migrations before anything else (default true: migrations run at start). */
  migrate?: boolean;
  /** The deployable (log field `svc`, metrics label `app`); default `svc`, the all-in-one. */
  app?: AppName;
  /** An existing registry (tests run two runtimes into one); default a new one for this process. */
  metrics?: Metrics;
  /** How the outbound client resolves names; the system resolver by default (tests: a resolver stand-in). */
  outboundLookup?: HostLookup;
}

/**
 * Config -> adapters -> domain services, the same for every app and for `svc start`:
 * the database (PGlite or PostgreSQL), migrations, shared state (memory or Redis), the
 * installation key bound to the database, tokens and password hashing.
 */
export async function createRuntime(config: Config, opts: RuntimeOptions = {}): Promise<Runtime> {
  const app = opts.app ?? 'svc';
  const log = opts.log ?? createLogger(config, undefined, app);
  const metrics = opts.metrics ?? createMetrics(app);
  const clock = opts.clock ?? systemClock;
  const installationKey = loadInstallationKey(config);
  const database =
    opts.database ?? (await connectDatabase({ url: config.database.url, dataDir: config.data_dir, poolSize: config.database.pool_size }));
  const closers: Array<() => Promise<void>> = opts.database ? [] : [() => database.destroy()];
  try {
    if (opts.migrate !== false) {
      const applied = await migrateToLatest(database.db);
      if (applied.length) log.info({ applied, database: database.location }, 'migrations applied');
    }
    const shared = await createSharedState({
      redisUrl: config.redis.url,
      keyPrefix: opts.redisKeyPrefix ?? config.redis.key_prefix,
      jobs: {
        onFailure: (name, err) => log.error({ err, job: name }, 'job failed for good'),
        onRun: (name, outcome, seconds) => metrics.jobRan(name, outcome, seconds),
      },
      onRedis: (event, err) =>
        event === 'lost' ? log.warn({ err }, 'Redis connection lost; reconnecting') : log.info('Redis connection back'),
    });
    closers.unshift(() => shared.close());
    const deps = await createDomainDeps({
      config,
      db: database.db,
      clock,
      log,
      rateLimiter: shared.rateLimiter,
      bus: shared.bus,
      jobs: shared.jobs,
      installationKey,
      metrics,
      // The owner's setting (or the configuration's override) is read before each connection.
      outbound: createOutboundClient({
        policy: async () => ({ allowPrivateNetworks: await allowPrivateNetworks({ db: database.db, config }) }),
        lookup: opts.outboundLookup,
      }),
      // The vendor clients (payment providers), outside the domain behind its ports.
      vendors: createVendors(),
    });
    const mailer = createMailer(config, { clock, log });
    closers.unshift(() => mailer.close());
    return {
      config,
      deps,
      database,
      shared,
      mailer,
      log,
      metrics,
      close: async () => {
        for (const close of closers) await close();
      },
    };
  } catch (err) {
    for (const close of closers) await close().catch(() => {});
    throw err;
  }
}
