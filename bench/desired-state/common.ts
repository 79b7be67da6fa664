// Shared by the desired-state benchmarks (big-node.ts, latency.ts, fan-out.ts): the product
// started as an operator would (all-in-one `svc start`, or the split pair admin-api +
// control-plane) over the bench schema, an owner signed in through the setup token, a small
// admin API client, and the simulated agents (bench/gateway/agents-worker.ts) reporting when
// each revision reached them. Everything else (schema, CA, nodes, certificates, /proc
// readings, cleanup, publishing) comes from bench/gateway/common.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createSealer } from '@svc/domain';
import { type AppProcess, spawnApp } from '@svc/testkit';
import { sql } from 'kysely';
import {
  type BenchDatabase,
  here as gatewayDir,
  type Installation,
  log,
  onCleanup,
  REDIS_PREFIX,
  setSerials,
  startControlPlane,
  track,
  type Worker,
} from '../gateway/common.ts';

/** Wall-clock milliseconds with sub-millisecond precision: the agents' worker processes stamp arrivals with the same clock. */
export const wall = () => performance.timeOrigin + performance.now();

/** 12.3 below 100, 1,234 above. */
export const ms = (x: number) => (Number.isNaN(x) ? '–' : x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US'));

// ---- the admin API

export class Api {
  constructor(
    readonly base: string,
    public token = '',
  ) {}

  async call<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(this.base + path, {
      method,
      headers: {
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
  get = <T = any>(path: string) => this.call<T>('GET', path);
  post = <T = any>(path: string, body: unknown) => this.call<T>('POST', path, body);
  patch = <T = any>(path: string, body: unknown) => this.call<T>('PATCH', path, body);
}

/** The owner created through the setup token by the first stack of a run; later stacks (same schema) sign in with it. */
let owner: { email: string; password: string } | null = null;

async function signIn(api: Api, app: AppProcess): Promise<void> {
  if (!owner) {
    const line = await app.waitForLog(/^bootstrap mode/, 30_000);
    const created = { email: 'bench-owner@example.com', password: 'bench-password-0123456789' };
    await api.post('/api/v1/setup', { token: line.setup_token, ...created });
    owner = created;
  }
  api.token = (await api.post<{ access_token: string }>('/api/v1/auth/login', owner)).access_token;
}

// ---- the product's processes

export type Mode = 'all-in-one' | 'split';

export interface Stack {
  mode: Mode;
  api: Api;
  /** host:port agents dial. */
  endpoint: string;
  /** The process holding the agents' streams (the all-in-one process, or control-plane). */
  gateway: { app: AppProcess; pid: number };
  /** The process serving the admin API (the same one in all-in-one mode). */
  admin: { app: AppProcess; pid: number };
  label: string;
  stop(): Promise<void>;
}

const probe = () =>
  `--import=${pathToFileURL(join(gatewayDir, 'memory-probe.mjs')).href} ${process.env.BENCH_GATEWAY_NODE_OPTIONS ?? ''}`.trim();

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-ds-'));
  onCleanup(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function commonEnv(database: BenchDatabase, inst: Installation, redis: string | undefined, logLevel: string): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    ...(redis ? { REDIS_URL: redis, SVC_REDIS_KEY_PREFIX: REDIS_PREFIX } : {}),
    SVC_INSTALLATION_KEY: inst.installationKey,
    SVC_DATA_DIR: tempDir(),
    SVC_HTTP_HOST: '127.0.0.1',
    SVC_HTTP_PORT: '0',
    SVC_LOG_LEVEL: logLevel,
  };
}

/**
 * all-in-one: `node --import tsx apps/cli/src/main.ts start` (admin API and gateway in one
 * process; Redis as its bus when one answers, else the in-memory bus). split: the admin-api
 * deployable and the control-plane deployable, talking over Redis (required).
 */
export async function startStack(
  mode: Mode,
  database: BenchDatabase,
  inst: Installation,
  redis: string | undefined,
  opts: { logLevel?: string; gatewayEnv?: Record<string, string> } = {},
): Promise<Stack> {
  const logLevel = opts.logLevel ?? process.env.BENCH_LOG_LEVEL ?? 'info';
  if (mode === 'all-in-one') {
    const app = spawnApp('bench/desired-state/all-in-one.ts', {
      ...commonEnv(database, inst, redis, logLevel),
      SVC_GRPC_HOST: '127.0.0.1',
      SVC_GRPC_PORT: '0',
      NODE_OPTIONS: probe(),
      ...opts.gatewayEnv,
    });
    track(app.child);
    onCleanup(async () => void (await app.stop(15_000)));
    const grpc = await app.waitForLog(/^agent gateway listening/, 60_000);
    const http = await app.waitForLog(/^listening on/, 60_000);
    const api = new Api(String(http.url));
    await signIn(api, app);
    const proc = { app, pid: app.child.pid as number };
    return {
      mode,
      api,
      endpoint: `127.0.0.1:${grpc.grpc_port}`,
      gateway: proc,
      admin: proc,
      label: `all-in-one (\`svc start\`: admin API and gateway in one process, ${redis ? 'Redis' : 'in-memory'} bus)`,
      stop: async () => void (await app.stop(15_000)),
    };
  }
  if (!redis) throw new Error('split mode needs Redis (REDIS_URL)');
  const adminApp = spawnApp('apps/admin-api/src/main.ts', { ...commonEnv(database, inst, redis, logLevel), NODE_OPTIONS: probe() });
  track(adminApp.child);
  onCleanup(async () => void (await adminApp.stop(15_000)));
  const http = await adminApp.waitForLog(/^admin-api listening on/, 60_000);
  const cp = await startControlPlane(database, inst, redis, { SVC_LOG_LEVEL: logLevel, ...opts.gatewayEnv });
  const api = new Api(String(http.url));
  await signIn(api, adminApp);
  return {
    mode,
    api,
    endpoint: cp.endpoint,
    gateway: { app: cp.app, pid: cp.pid },
    admin: { app: adminApp, pid: adminApp.child.pid as number },
    label: 'split (admin-api and control-plane processes, Redis bus)',
    stop: async () => {
      await cp.app.stop(15_000);
      await adminApp.stop(15_000);
    },
  };
}

/**
 * The measured rounds' spans on the monotonic clock (µs, the clock of V8's CPU profiles), written
 * to BENCH_PROFILE_WINDOWS when set, so `node bench/gateway/profile-report.mjs <profile> <windows>`
 * can keep only the samples taken during the rounds.
 */
export class ProfileWindows {
  private readonly spans: string[][] = [];
  private open: bigint | null = null;
  start(): void {
    this.open = process.hrtime.bigint() / 1000n;
  }
  end(): void {
    if (this.open !== null) this.spans.push([String(this.open), String(process.hrtime.bigint() / 1000n)]);
    this.open = null;
  }
  save(): void {
    if (process.env.BENCH_PROFILE_WINDOWS) writeFileSync(process.env.BENCH_PROFILE_WINDOWS, JSON.stringify(this.spans));
  }
}

/** With BENCH_CPU_PROFILE set (and bench/gateway/cpu-profile.mjs preloaded), has the process write its CPU profile so far. */
export async function writeCpuProfile(proc: { app: AppProcess; pid: number }): Promise<void> {
  if (!process.env.BENCH_CPU_PROFILE) return;
  const from = proc.app.lines.length;
  process.kill(proc.pid, 'SIGWINCH');
  for (let i = 0; i < 200; i++) {
    if (proc.app.lines.slice(from).some((l) => l.includes('"bench cpu profile written"'))) {
      log(`CPU profile of pid ${proc.pid} written`);
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  log(`pid ${proc.pid} wrote no CPU profile (is bench/gateway/cpu-profile.mjs preloaded through BENCH_GATEWAY_NODE_OPTIONS?)`);
}

/** warn and error lines a process logged. */
export function warnings(app: AppProcess): string[] {
  return app.lines.filter((l) => {
    try {
      return (JSON.parse(l) as { level: number }).level >= 40 && !l.includes('bootstrap mode');
    } catch {
      return false;
    }
  });
}

// ---- seeding

/** `count` active clients, ids cli_<26 digits>. */
export async function seedClients(database: BenchDatabase, count: number): Promise<void> {
  const now = new Date();
  await sql`
    insert into clients (id, email, status, email_verified_at, created_at, updated_at)
    select 'cli_' || lpad(i::text, 26, '0'), 'client' || i || '@bench.example', 'active', ${now}, ${now}, ${now}
    from generate_series(1, ${count}) as i`.execute(database.db);
}

/**
 * `count` active subscriptions (ids sub_<26 digits>, spread over `clients` clients) granted
 * `groupId`, set-based. One link token, sealed with the installation key, for all (the admin
 * API opens it to show the link).
 */
export async function seedSubscriptions(
  database: BenchDatabase,
  inst: Installation,
  count: number,
  clients: number,
  groupId: string,
): Promise<void> {
  const now = new Date();
  const tokenEnc = createSealer(Buffer.from(inst.installationKey, 'base64')).seal('bench-link-token-0123456789abcdefghijklmnop');
  await sql`
    insert into subscriptions (id, client_id, status, used_bytes, renewal, period_started_at, vless_uuid, vmess_uuid,
      trojan_password, shadowsocks_password, token_hash, token_enc, created_at, updated_at)
    select 'sub_' || lpad(i::text, 26, '0'), 'cli_' || lpad((1 + i % ${clients})::text, 26, '0'), 'active', 0, 'no_reset', ${now},
      gen_random_uuid(), gen_random_uuid(), md5(i::text), md5((i * 31)::text), md5(i::text) || md5((i * 7)::text), ${tokenEnc}, ${now}, ${now}
    from generate_series(1, ${count}) as i`.execute(database.db);
  await sql`
    insert into subscription_access_groups (subscription_id, access_group_id)
    select 'sub_' || lpad(i::text, 26, '0'), ${groupId} from generate_series(1, ${count}) as i`.execute(database.db);
  await sql`analyze subscriptions, subscription_access_groups, clients`.execute(database.db);
}

export const subscriptionId = (i: number) => `sub_${String(i).padStart(26, '0')}`;

/** Client certificates for these nodes, signed by the workers (split as `shares`), serials pinned on the node rows. */
export async function signCertificates(database: BenchDatabase, inst: Installation, workers: Worker[], shares: string[][]): Promise<void> {
  const t = performance.now();
  const signed = await Promise.all(
    workers.map((w, i) => {
      w.send({ type: 'sign', caCertPem: inst.caCertPem, caKeyPem: inst.caKeyPem, csrPem: inst.agent.csrPem, nodeIds: shares[i] });
      return w.next<{ serials: Array<[string, string]> }>('signed');
    }),
  );
  await setSerials(
    database.pool,
    signed.flatMap((s) => s.serials),
  );
  log(`${shares.flat().length} client certificates signed in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

// ---- agents

export interface Opened {
  opened: number;
  failed: number;
  failures: string[];
  latencies: number[];
  ms: number;
}

/** Opens every worker's streams (each admitted with its first DesiredState), then turns arrival recording on. */
export async function openStreams(workers: Worker[], endpoint: string, inst: Installation, concurrency = 50): Promise<Opened[]> {
  const opened = await Promise.all(
    workers.map((w) => {
      w.send({ type: 'streams', endpoint, caCertPem: inst.caCertPem, keyPem: inst.agent.keyPem, concurrency, statusPeriodMs: 30_000 });
      return w.next<Opened>('opened');
    }),
  );
  const failed = opened.flatMap((o) => o.failures);
  if (failed.length) throw new Error(`streams failed to open: ${failed.join('; ')}`);
  await Promise.all(
    workers.map((w) => {
      w.send({ type: 'record', on: true });
      return w.next('recording');
    }),
  );
  return opened;
}

/** Per node: [node, revision, wall ms at arrival, message bytes, decode ms]. */
export type Arrival = [string, number, number, number, number];

/** Waits until every agent of every worker has `revision` (or a newer one); throws when some do not within timeoutMs. */
export async function awaitRevision(workers: Worker[], revision: number, timeoutMs = 60_000): Promise<Arrival[]> {
  const replies = await Promise.all(
    workers.map((w) => {
      w.send({ type: 'await-revision', revision, timeoutMs });
      return w.next<{ arrivals: Arrival[]; missing: string[] }>('revision', timeoutMs + 30_000);
    }),
  );
  const missing = replies.flatMap((r) => r.missing);
  if (missing.length)
    throw new Error(
      `${missing.length} agents did not get revision ${revision} within ${timeoutMs} ms (${missing.slice(0, 3).join(', ')}…)`,
    );
  return replies.flatMap((r) => r.arrivals);
}

/** Waits until every agent got the command `<prefix><its node id>`; per node: [node, wall ms at arrival]. */
export async function awaitCommands(workers: Worker[], prefix: string, timeoutMs = 60_000): Promise<Array<[string, number]>> {
  const replies = await Promise.all(
    workers.map((w) => {
      w.send({ type: 'await-commands', prefix, timeoutMs });
      return w.next<{ arrivals: Array<[string, number]>; missing: string[] }>('commands', timeoutMs + 30_000);
    }),
  );
  const missing = replies.flatMap((r) => r.missing);
  if (missing.length) throw new Error(`${missing.length} agents did not get their command ${prefix}… within ${timeoutMs} ms`);
  return replies.flatMap((r) => r.arrivals);
}

/** The node's desired revision as committed. */
export async function desiredRevision(database: BenchDatabase, nodeId: string): Promise<number> {
  const r = await database.pool.query('select desired_revision from nodes where id = $1', [nodeId]);
  return Number(r.rows[0]?.desired_revision);
}
