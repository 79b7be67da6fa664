// The fleet a gateway or desired-state bench drives: the product's processes over the bench
// schema, and simulated agents (bench/gateway/agents-worker.ts) in worker processes holding the
// nodes' client certificates. setUpFleet is what every such bench starts with.
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type AppProcess, spawnApp } from '@svc/testkit';
import type pg from 'pg';
import { type BenchDatabase, benchDatabase, type Installation, installation, redisUrl } from './database.ts';
import { BENCH_DIR, log, n, onCleanup, quietMachine, sleep, tempDir, track } from './run.ts';
import { seedNodes } from './seed.ts';

export interface Fleet {
  /** Load average at the start, once the machine was quiet. */
  loadBefore: string;
  database: BenchDatabase;
  /** REDIS_URL when a Redis answers there; undefined: the processes use the in-memory bus. */
  redis: string | undefined;
  inst: Installation;
  nodeIds: string[];
  /** Simulated-agent processes, each holding the client certificates of its share of the nodes (node k: worker k % workers). */
  workers: Worker[];
}

/**
 * What every fleet bench starts with: a quiet machine, a fresh schema (`poolSize` connections
 * for the bench, named after `schemaPrefix`), Redis when one answers, the installation's CA,
 * `nodes` node rows as enrollment leaves them, and `workers` (at most one per node) simulated-agent
 * processes with those nodes' client certificates signed, serials pinned on the rows.
 */
export async function setUpFleet(opts: { nodes: number; workers: number; poolSize?: number; schemaPrefix?: string }): Promise<Fleet> {
  const loadBefore = await quietMachine();
  const database = await benchDatabase(opts.poolSize, opts.schemaPrefix);
  const redis = await redisUrl();
  const inst = await installation(database.db);
  const nodeIds = await seedNodes(database.db, opts.nodes);
  log(`${n(opts.nodes)} nodes seeded in ${database.schema}; bus: ${redis ? 'Redis' : 'memory'}`);
  const count = Math.min(opts.workers, opts.nodes);
  const workers = Array.from({ length: count }, (_, i) => startWorker(i));
  const shares = workers.map((_, i) => nodeIds.filter((_, k) => k % count === i));
  if (count > 0) await signCertificates({ database, inst }, workers, shares);
  return { loadBefore, database, redis, inst, nodeIds, workers };
}

// ---- the product's processes

/** Key prefix (channels included) of every process of a run on a shared Redis. */
export const REDIS_PREFIX = `svc-bench-${process.pid}:`;

/**
 * The environment every product process of a run shares: the bench schema, Redis (when one
 * answers), the installation key, a data dir of its own, and the memory probe preloaded.
 */
export function productEnv(fleet: Pick<Fleet, 'database' | 'inst' | 'redis'>): Record<string, string> {
  return {
    DATABASE_URL: fleet.database.url,
    ...(fleet.redis ? { REDIS_URL: fleet.redis, SVC_REDIS_KEY_PREFIX: REDIS_PREFIX } : {}),
    SVC_INSTALLATION_KEY: fleet.inst.installationKey,
    SVC_DATA_DIR: tempDir('svc-bench-data-'),
    // BENCH_GATEWAY_NODE_OPTIONS: extra flags for the product's processes. Node refuses --cpu-prof in NODE_OPTIONS;
    // to see where their time goes, preload cpu-profile.mjs (with BENCH_CPU_PROFILE=<file prefix>).
    NODE_OPTIONS:
      `--import=${pathToFileURL(join(BENCH_DIR, 'gateway', 'memory-probe.mjs')).href} ${process.env.BENCH_GATEWAY_NODE_OPTIONS ?? ''}`.trim(),
  };
}

/** A product entry file in a child process, stopped at the end of the run. */
export function spawnProduct(entry: string, env: Record<string, string>): AppProcess {
  const app = spawnApp(entry, env);
  track(app.child);
  onCleanup(async () => void (await app.stop(15_000)));
  return app;
}

/**
 * The agent gateway deployable (apps/control-plane/src/main.ts under tsx, or `entry`: its
 * precompiled apps/control-plane/dist/main.js) over the bench schema; `extraEnv` adds to or
 * overrides its environment.
 */
export async function startControlPlane(
  fleet: Pick<Fleet, 'database' | 'inst' | 'redis'>,
  extraEnv: Record<string, string> = {},
  entry = 'apps/control-plane/src/main.ts',
): Promise<{ app: AppProcess; pid: number; endpoint: string }> {
  const app = spawnProduct(entry, {
    ...productEnv(fleet),
    SVC_GRPC_HOST: '127.0.0.1',
    SVC_GRPC_PORT: '0',
    SVC_LOG_LEVEL: 'info',
    ...extraEnv,
  });
  const line = await app.waitForLog(/^agent gateway listening/, 60_000);
  return { app, pid: app.child.pid as number, endpoint: `127.0.0.1:${line.grpc_port}` };
}

export interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

/** process.memoryUsage() of the control plane (memory-probe.mjs answers SIGUSR2 on stdout). */
export async function memoryOf(cp: { app: AppProcess; pid: number }): Promise<Memory> {
  const from = cp.app.lines.length;
  process.kill(cp.pid, 'SIGUSR2');
  // A heap snapshot (BENCH_HEAP_SNAPSHOT_DIR) of a big heap takes minutes on a busy machine.
  const tries = process.env.BENCH_HEAP_SNAPSHOT_DIR ? 12_000 : 200;
  for (let i = 0; i < tries; i++) {
    for (const line of cp.app.lines.slice(from)) if (line.includes('"bench memory"')) return JSON.parse(line) as Memory;
    await sleep(50);
  }
  throw new Error('the control plane did not report its memory');
}

/** warn and error lines a process logged (the bootstrap-mode notice aside). */
export function warnings(app: AppProcess): string[] {
  return app.lines.filter((l) => {
    try {
      return (JSON.parse(l) as { level: number }).level >= 40 && !l.includes('bootstrap mode');
    } catch {
      return false;
    }
  });
}

// ---- simulated agents

export interface Worker {
  proc: ChildProcess;
  send(msg: unknown): void;
  /** The next message of this type from the worker. */
  next<T>(type: string, timeoutMs?: number): Promise<T>;
  on(type: string, fn: (msg: any) => void): void;
}

/** A simulated-agent process (agents-worker.ts): its own event loop, sockets and fds. */
export function startWorker(index: number): Worker {
  const proc = track(
    fork(join(BENCH_DIR, 'gateway', 'agents-worker.ts'), [String(index)], {
      execArgv: ['--import', 'tsx'],
      env: process.env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const listeners = new Map<string, Set<(m: any) => void>>();
  proc.on('message', (m: any) => {
    for (const fn of [...(listeners.get(m?.type) ?? [])]) fn(m);
  });
  const on = (type: string, fn: (m: any) => void) => {
    const set = listeners.get(type) ?? new Set();
    set.add(fn);
    listeners.set(type, set);
    return () => set.delete(fn);
  };
  return {
    proc,
    send: (msg) => proc.send(msg as never),
    on,
    next<T>(type: string, timeoutMs = 600_000) {
      return new Promise<T>((resolve, reject) => {
        const off = on(type, (m) => {
          off();
          clearTimeout(timer);
          proc.off('exit', exited);
          resolve(m as T);
        });
        const exited = (code: number | null) => {
          off();
          clearTimeout(timer);
          reject(new Error(`agents worker ${index} exited (${code}) while waiting for "${type}"`));
        };
        const timer = setTimeout(() => {
          off();
          proc.off('exit', exited);
          reject(new Error(`agents worker ${index}: no "${type}" within ${timeoutMs} ms`));
        }, timeoutMs);
        proc.once('exit', exited);
      });
    },
  };
}

/** Asks a worker to stop (it closes its streams), and kills it if it does not exit in time. */
export async function stopWorker(w: Worker, graceMs = 20_000): Promise<void> {
  if (w.proc.exitCode !== null || w.proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => w.proc.once('exit', () => r()));
  w.send({ type: 'stop' });
  const timer = setTimeout(() => w.proc.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

// ---- client certificates

export async function setSerials(pool: pg.Pool, serials: Array<[string, string]>): Promise<void> {
  await pool.query(
    `update nodes n set cert_serial = v.serial, cert_not_after = now() + interval '90 days'
       from unnest($1::text[], $2::text[]) as v(id, serial) where n.id = v.id`,
    [serials.map((s) => s[0]), serials.map((s) => s[1])],
  );
}

/** Client certificates for these nodes, signed by the workers (split as `shares`), serials pinned on the node rows. */
export async function signCertificates(fleet: Pick<Fleet, 'database' | 'inst'>, workers: Worker[], shares: string[][]): Promise<void> {
  const { inst } = fleet;
  const t = performance.now();
  const signed = await Promise.all(
    workers.map((w, i) => {
      w.send({ type: 'sign', caCertPem: inst.caCertPem, caKeyPem: inst.caKeyPem, csrPem: inst.agent.csrPem, nodeIds: shares[i] });
      return w.next<{ serials: Array<[string, string]> }>('signed');
    }),
  );
  await setSerials(
    fleet.database.pool,
    signed.flatMap((s) => s.serials),
  );
  log(`${n(shares.flat().length)} client certificates signed in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
