import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { loadConfig } from '@svc/config';
import { type Actor, type DomainContext, type DomainDeps, SYSTEM, withActor } from '@svc/domain';
import { createLogger, createRuntime, type Runtime } from '@svc/runtime';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { createFakeClock, type FakeClock } from './fake-clock.ts';

/** An admin actor for domain calls that tests make as an operator would. */
export const TEST_OWNER: Actor = { type: 'admin', id: 'adm_test_owner', role: 'owner' };

export interface DomainTestbed {
  deps: DomainDeps;
  clock: FakeClock;
  database: TestDatabase;
  runtime: Runtime;
  /** The context a use case runs with: the owner by default. */
  ctx(actor?: Actor): DomainContext;
  /** The system actor's context (the worker's sweeps). */
  system(): DomainContext;
  /** Messages published on the bus since the testbed started, of one topic. */
  published(topic: string): unknown[];
  /** Every publication since the testbed started, in the order they were made. */
  publications(): ReadonlyArray<{ topic: string; message: unknown }>;
  /** Log lines written since the testbed started, parsed (at SVC_LOG_LEVEL, `warn` unless env says otherwise). */
  logs: Array<Record<string, any>>;
  close(): Promise<void>;
}

/**
 * The domain without any transport, for tests of business rules at the level of the use case:
 * a migrated database of the test's own (PGlite, or a schema on DATABASE_URL), the shared
 * state the runtime picks (memory, or Redis under a prefix of the test's own when REDIS_URL
 * is set), a fake clock and a logger that keeps its lines for the test (`logs`). The same
 * createRuntime the apps use.
 */
export async function createDomainTestbed(
  opts: {
    env?: Record<string, string>;
    clock?: FakeClock;
    /** A database of the test's own (the upgrade tests' older schema), migrated by the runtime as at an app's start; closed with the testbed. */
    database?: TestDatabase;
  } = {},
): Promise<DomainTestbed> {
  const config = loadConfig({
    SVC_DATA_DIR: '/nonexistent-svc-test-data',
    SVC_LOG_LEVEL: 'warn',
    SVC_INSTALLATION_KEY: randomBytes(32).toString('base64'),
    // Stand-ins listen on 127.0.0.1 (see test-server.ts); the outbound policy's own tests set '' (unset).
    SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...opts.env,
  });
  const clock = opts.clock ?? createFakeClock();
  const database = opts.database ?? (await createTestDatabase());
  const logs: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      cb();
    },
  });
  const runtime = await createRuntime(config, {
    clock,
    database,
    log: createLogger(config, sink),
    redisKeyPrefix: `svc-test:${randomBytes(6).toString('hex')}:`,
  });
  // The real bus, with a record of what went out on it (what a unit of work announced).
  const seen: Array<{ topic: string; message: unknown }> = [];
  const bus = runtime.deps.bus;
  const deps: DomainDeps = {
    ...runtime.deps,
    bus: {
      publish: async (topic, message) => {
        seen.push({ topic, message });
        await bus.publish(topic, message);
      },
      subscribe: (topic, handler) => bus.subscribe(topic, handler),
    },
  };
  return {
    deps,
    clock,
    database,
    runtime,
    ctx: (actor = TEST_OWNER) => withActor(deps, actor),
    system: () => withActor(deps, SYSTEM),
    published: (topic) => seen.filter((p) => p.topic === topic).map((p) => p.message),
    publications: () => [...seen],
    logs,
    async close() {
      await runtime.close();
      await database.destroy();
    },
  };
}
