import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { type Config, loadConfig } from '@svc/config';
import type { DomainDeps } from '@svc/domain';
import { type AppEnv, createHttpService } from '@svc/http';
import { createLogger, createRuntime, prepareBootstrap, type Runtime, startMetricsListener } from '@svc/runtime';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { createFakeClock, type FakeClock } from './fake-clock.ts';
import { type ApiClient, createApiClient } from './http-client.ts';

export interface TestServer {
  url: string;
  api: ApiClient;
  deps: DomainDeps;
  config: Config;
  clock: FakeClock;
  runtime: Runtime;
  database: TestDatabase;
  /** The setup token logged at start, or null when an admin existed. */
  setupToken: string | null;
  /** Every log line written so far, parsed. */
  logs: Array<Record<string, any>>;
  /** The metrics port's /metrics URL when SVC_METRICS_PORT is set (e.g. '0'), else null. */
  metricsUrl: string | null;
  /** Stops HTTP and the runtime; the database survives when `keepDatabase`. */
  stop(opts?: { keepDatabase?: boolean }): Promise<void>;
}

/** A mounted surface that holds state of its own (createAdminApi, createPortalApi). */
export interface Stoppable {
  stop(): Promise<void>;
}

export interface TestServerOptions {
  /** Environment as an operator would set it (SVC_*), on top of the test defaults. */
  env?: Record<string, string>;
  clock?: FakeClock;
  /** Reuse a database (restart scenarios); by default each server gets its own. */
  database?: TestDatabase;
  /** Open the database named by the config (SVC_DATA_DIR / DATABASE_URL) like `svc start` does. */
  useConfiguredDatabase?: boolean;
  installationKey?: string;
  /** Redis key prefix; by default each server gets its own. Two servers given one prefix (and one database) are replicas of one installation. */
  redisKeyPrefix?: string;
  /** Config values in the config file's shape (e.g. rate_limits), applied over env. */
  config?: Record<string, unknown>;
  /**
   * Mounts the surfaces under test on the root app (e.g. `mountAdminApi`); what it returns is
   * stopped with the server, after HTTP and before the runtime (a surface's own state).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a mount that only registers routes returns nothing.
  mount: (root: OpenAPIHono<AppEnv>) => Stoppable | ReadonlyArray<Stoppable> | void;
}

/**
 * Boots the real thing: config from env, runtime (database, shared state: Redis when
 * REDIS_URL is set), the admin surface on an ephemeral port, bootstrap announcement.
 */
export async function startTestServer(opts: TestServerOptions): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const env: Record<string, string> = {
    SVC_DATA_DIR: dataDir,
    SVC_HTTP_HOST: '127.0.0.1',
    SVC_HTTP_PORT: '0',
    SVC_LOG_LEVEL: 'info',
    SVC_INSTALLATION_KEY: opts.installationKey ?? randomBytes(32).toString('base64'),
    // The stand-ins (webhook receivers, pebble, BIND, OAuth, DNS and payment APIs) listen on
    // 127.0.0.1: the suites allow private networks; the outbound policy's own tests set '' (unset).
    SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...opts.env,
  };
  const config = loadConfig(env, opts.config ?? {});
  const logs: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      cb();
    },
  });
  const clock = opts.clock ?? createFakeClock();
  const database = opts.useConfiguredDatabase ? undefined : (opts.database ?? (await createTestDatabase()));
  const runtime = await createRuntime(config, {
    clock,
    log: createLogger(config, sink),
    ...(database ? { database } : {}),
    redisKeyPrefix: opts.redisKeyPrefix ?? `svc-test:${randomBytes(6).toString('hex')}:`,
  });
  const bootstrap = await prepareBootstrap(runtime);
  const metrics = await startMetricsListener(runtime);
  const surfaces: Stoppable[] = [];
  const http = createHttpService(
    runtime.deps,
    (root) => {
      const mounted = opts.mount(root);
      if (mounted) surfaces.push(...(Array.isArray(mounted) ? mounted : [mounted as Stoppable]));
    },
    { extraPorts: true },
  );
  const { url } = await http.start();
  bootstrap.announce(url);
  const setupToken = bootstrap.token;
  return {
    url,
    api: createApiClient(url),
    deps: runtime.deps,
    config,
    clock,
    runtime,
    database: database ?? runtime.database,
    setupToken,
    logs,
    metricsUrl: metrics?.url ?? null,
    async stop(o = {}) {
      await metrics?.stop();
      await http.stop();
      for (const surface of surfaces) await surface.stop();
      await runtime.close();
      if (!o.keepDatabase && database) await database.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
