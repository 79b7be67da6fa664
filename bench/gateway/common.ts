// Shared by the gateway benchmarks (streams.ts, usage.ts): a fresh PostgreSQL schema, the
// installation's CA and nodes seeded straight into it, the control-plane deployable and the
// simulated agents as child processes, /proc readings, and the results section.
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMemoryBus, createMemoryJobQueue } from '@svc/bus';
import { connectDatabase, type Db, migrateToLatest } from '@svc/db';
import { createSealer, ensureCertificateAuthority, type Sealer, systemClock, type UnitOfWorkDeps } from '@svc/domain';
import { type AppProcess, spawnApp } from '@svc/testkit';
import { makeCsr } from '@svc/testkit/agent-simulator';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';

export const here = dirname(fileURLToPath(import.meta.url));
export const BENCHMARKS_MD = join(here, '..', 'BENCHMARKS.md');
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
/** Every connection of a run (the gateway's, the bench's) carries this application_name, so its backends can be told from other work. */
export const APP_NAME = `svc-bench-${process.pid}`;
export const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const n = (x: number) => Math.round(x).toLocaleString('en-US');
export const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number) : Number.NaN;
};
export const log = (msg: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

// ---- cleanup: child processes die with us; the schema is dropped on the way out.

const children = new Set<ChildProcess>();
const cleanups: Array<() => Promise<void>> = [];
let cleaning: Promise<void> | undefined;

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
export const onCleanup = (fn: () => Promise<void>) => cleanups.push(fn);

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const fn of cleanups.reverse()) await fn().catch((err) => log(`cleanup: ${(err as Error).message}`));
    for (const c of children) c.kill('SIGKILL');
  })();
  return cleaning;
}
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

/** Runs a benchmark: whatever happens, children are killed and the schema dropped. */
export async function main(fn: () => Promise<void>): Promise<never> {
  let code = 0;
  try {
    await fn();
  } catch (err) {
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
    code = 1;
  }
  await cleanup();
  process.exit(code);
}

// ---- the machine

/** `uptime`'s 1-minute load; waits (60 s at a time, BENCH_LOAD_RETRIES times) while it is above 1.5. */
export async function quietMachine(): Promise<string> {
  const retries = env('BENCH_LOAD_RETRIES', 5);
  const load1 = () => loadavg()[0] ?? 0;
  for (let i = 0; load1() > 1.5 && i < retries; i++) {
    log(`load average ${load1().toFixed(2)} > 1.5: other work is running, waiting 60 s (${i + 1}/${retries})`);
    await sleep(60_000);
  }
  return loadNow();
}

export const loadNow = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

/** The soft limit on open files this process (and the children it starts) has: `ulimit -n`. */
export function openFilesLimit(): number {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m?.[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(m?.[1] ?? 1024);
}

export function machine(): string {
  return `${cpus()[0]?.model ?? 'cpu'} ×${availableParallelism()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** The commit measured, marked when apps/ or packages/ differ from it. */
export function revision(): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: join(here, '..', '..') })
        .toString()
        .trim();
    const dirty = git('status', '--porcelain', '--', 'apps', 'packages') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' with uncommitted changes in apps/ or packages/' : ''}`;
  } catch {
    return 'unknown';
  }
}

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** CPU seconds (user + sys) a process has used, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** Resident set size in bytes, from /proc/<pid>/status. */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

/** Peak resident set size in bytes (VmHWM, the high-water mark since the process started), from /proc/<pid>/status. */
export function peakRssBytes(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

/** Bytes a process has read through read(2)-like calls (rchar of /proc/<pid>/io: sockets included, page cache or not). */
export function bytesRead(pid: number): number {
  const m = /^rchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

/** CPU seconds the whole machine spent busy (all cores; /proc/stat, idle and iowait excluded). */
export function machineBusySeconds(): number {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return (total - (f[3] ?? 0) - (f[4] ?? 0)) / CLK_TCK;
}

/** CPU seconds of a set of processes (ones that ended meanwhile are left out). */
export function cpuOf(pids: number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const p of pids) {
    try {
      m.set(p, cpuSeconds(p));
    } catch {}
  }
  return m;
}

/** CPU seconds used between two readings; a process absent from the first started in between. */
export const cpuDelta = (a: Map<number, number>, b: Map<number, number>) => {
  let s = 0;
  for (const [p, v] of b) s += v - (a.get(p) ?? 0);
  return s;
};

/** Named groups of processes whose CPU is read together, with the machine's, at one instant. */
export type CpuGroups = Record<string, () => number[] | Promise<number[]>>;
export interface CpuReading {
  at: number;
  machine: number;
  groups: Record<string, Map<number, number>>;
}

export async function readCpu(groups: CpuGroups): Promise<CpuReading> {
  const pids: Record<string, number[]> = {};
  for (const [k, f] of Object.entries(groups)) pids[k] = await f();
  const out: CpuReading = { at: performance.now(), machine: machineBusySeconds(), groups: {} };
  for (const [k, list] of Object.entries(pids)) out.groups[k] = cpuOf(list);
  return out;
}

/** % of one core per group between two readings, the machine's, and `other`: what the rest of the machine used. */
export function cpuPercent(a: CpuReading, b: CpuReading): Record<string, number> {
  const seconds = (b.at - a.at) / 1000;
  const out: Record<string, number> = {};
  let ours = 0;
  for (const k of Object.keys(b.groups)) {
    out[k] = (cpuDelta(a.groups[k] ?? new Map(), b.groups[k] as Map<number, number>) / seconds) * 100;
    ours += out[k] as number;
  }
  out.machine = ((b.machine - a.machine) / seconds) * 100;
  out.other = Math.max(0, (out.machine as number) - ours);
  return out;
}

// ---- the database

/** DATABASE_URL (or the default) with the run's application_name. */
export function benchDatabaseUrl(): string {
  const u = new URL(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  u.searchParams.set('application_name', APP_NAME);
  return u.toString();
}

/** Our backends on the PostgreSQL server (by application_name) and its shared writers (checkpointer, WAL writer, background writer). */
export async function ourPostgresPids(pool: pg.Pool): Promise<number[]> {
  const r = await pool.query(
    `select pid from pg_stat_activity where application_name = $1 or backend_type in ('checkpointer', 'walwriter', 'background writer')`,
    [APP_NAME],
  );
  return r.rows.map((x: { pid: number }) => x.pid);
}

export interface BenchDatabase {
  /** URL reaching the bench schema (search_path), for the control-plane process. */
  url: string;
  schema: string;
  db: Db;
  pool: pg.Pool;
  serverVersion: string;
}

/** A fresh, migrated schema on the PostgreSQL server (DATABASE_URL), dropped at the end. */
export async function benchDatabase(poolSize = 8, prefix = 'bench_gateway'): Promise<BenchDatabase> {
  const base = benchDatabaseUrl();
  const schema = `${prefix}_${process.pid}`;
  const handle = await connectDatabase({ url: base, dataDir: '', schema, poolSize: 4 });
  onCleanup(async () => {
    await handle.destroy();
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await c.end();
    log(`schema ${schema} dropped`);
  });
  await migrateToLatest(handle.db);
  const pool = new pg.Pool({ connectionString: base, max: poolSize, options: `-c search_path=${schema}` });
  onCleanup(() => pool.end());
  const u = new URL(base);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const v = (
    await pool.query(`select current_setting('server_version') as version, current_setting('shared_buffers') as sb,
      current_setting('max_wal_size') as mw, current_setting('synchronous_commit') as sc, current_setting('autovacuum') as av`)
  ).rows[0] as Record<string, string>;
  const serverVersion = `${v.version} (shared_buffers ${v.sb}, max_wal_size ${v.mw}, synchronous_commit ${v.sc}, autovacuum ${v.av})`;
  return { url: u.toString(), schema, db: handle.db, pool, serverVersion };
}

/** Node rows as enrollment leaves them (cert_serial is set once their certificates are signed). */
export async function seedNodes(db: Db, count: number): Promise<string[]> {
  const now = new Date();
  await sql`
    insert into nodes (id, name, address, created_at, updated_at)
    select 'nod_' || lpad(i::text, 26, '0'), 'bench-node-' || i, 'node-' || i || '.bench.example', ${now}, ${now}
    from generate_series(1, ${count}) as i`.execute(db);
  return Array.from({ length: count }, (_, i) => `nod_${String(i + 1).padStart(26, '0')}`);
}

export async function setSerials(pool: pg.Pool, serials: Array<[string, string]>): Promise<void> {
  await pool.query(
    `update nodes n set cert_serial = v.serial, cert_not_after = now() + interval '90 days'
       from unnest($1::text[], $2::text[]) as v(id, serial) where n.id = v.id`,
    [serials.map((s) => s[0]), serials.map((s) => s[1])],
  );
}

export interface Installation {
  /** 32 bytes, base64: the control plane is started with it, so it opens the CA we created. */
  installationKey: string;
  caCertPem: string;
  /** The CA key (bench only: handed to the workers that sign the node certificates). */
  caKeyPem: string;
  /** One agent key pair shared by every simulated node; one certificate per node. */
  agent: { csrPem: string; keyPem: string };
}

/**
 * What a bench's direct domain calls run with: the database, the system clock, a silent log,
 * and in-process bus and jobs (nothing listens: a bench measures the call, not its fan-out).
 */
export function benchDeps(db: Db, secrets: Sealer = createSealer(randomBytes(32))): UnitOfWorkDeps & { secrets: Sealer } {
  return { db, clock: systemClock, secrets, log: pino({ level: 'silent' }), bus: createMemoryBus(), jobs: createMemoryJobQueue() };
}

/** The installation's CA, made the way the control plane makes it (ensureCertificateAuthority). */
export async function installation(db: Db): Promise<Installation> {
  const key = randomBytes(32);
  const secrets = createSealer(key);
  const ca = await ensureCertificateAuthority(benchDeps(db, secrets));
  const row = await db.selectFrom('certificate_authority').select('key_enc').where('id', '=', 1).executeTakeFirstOrThrow();
  return {
    installationKey: key.toString('base64'),
    caCertPem: ca.certPem,
    caKeyPem: secrets.open(row.key_enc),
    agent: await makeCsr('bench-agent'),
  };
}

async function redisReachable(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = connect({ host: u.hostname, port: Number(u.port || 6379) });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(1000, () => done(false));
    s.once('error', () => done(false));
    s.once('connect', () => s.write('PING\r\n'));
    s.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** REDIS_URL (default redis://127.0.0.1:6379) when a Redis answers there; else the in-memory bus. */
export async function redisUrl(): Promise<string | undefined> {
  const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  return (await redisReachable(url)) ? url : undefined;
}

// ---- processes

/** Key prefix (channels included) of every process of a run on a shared Redis. */
export const REDIS_PREFIX = `svc-bench-${process.pid}:`;

/** The agent gateway deployable (apps/control-plane/src/main.ts) over the bench schema; `extraEnv` adds to or overrides its environment. */
export async function startControlPlane(
  database: BenchDatabase,
  inst: Installation,
  redis: string | undefined,
  extraEnv: Record<string, string> = {},
): Promise<{ app: AppProcess; pid: number; endpoint: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-gw-'));
  onCleanup(async () => rmSync(dataDir, { recursive: true, force: true }));
  const app = spawnApp('apps/control-plane/src/main.ts', {
    DATABASE_URL: database.url,
    ...(redis ? { REDIS_URL: redis, SVC_REDIS_KEY_PREFIX: REDIS_PREFIX } : {}),
    SVC_INSTALLATION_KEY: inst.installationKey,
    SVC_DATA_DIR: dataDir,
    SVC_GRPC_HOST: '127.0.0.1',
    SVC_GRPC_PORT: '0',
    SVC_LOG_LEVEL: 'info',
    // BENCH_GATEWAY_NODE_OPTIONS: extra flags for the gateway. Node refuses --cpu-prof in NODE_OPTIONS;
    // to see where its time goes, preload cpu-profile.mjs (with BENCH_CPU_PROFILE=<file prefix>).
    NODE_OPTIONS: `--import=${pathToFileURL(join(here, 'memory-probe.mjs')).href} ${process.env.BENCH_GATEWAY_NODE_OPTIONS ?? ''}`.trim(),
    ...extraEnv,
  });
  track(app.child);
  onCleanup(async () => {
    await app.stop(15_000);
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
  for (let i = 0; i < 100; i++) {
    for (const line of cp.app.lines.slice(from)) if (line.includes('"bench memory"')) return JSON.parse(line) as Memory;
    await sleep(50);
  }
  throw new Error('the control plane did not report its memory');
}

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
    fork(join(here, 'agents-worker.ts'), [String(index)], {
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

// ---- results

/** Prints the section and appends it to bench/BENCHMARKS.md. */
export function publish(lines: string[]): void {
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  if (process.env.BENCH_NO_APPEND) return;
  appendFileSync(BENCHMARKS_MD, `\n${text}`);
  log(`appended to ${BENCHMARKS_MD}`);
}
