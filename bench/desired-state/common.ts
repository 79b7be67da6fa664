// Shared by the desired-state benchmarks (big-node.ts, latency.ts, fan-out.ts): the product
// started as an operator would (all-in-one `svc start`, or the split pair admin-api +
// control-plane) over the fleet's schema, an owner signed in through the setup token, a small
// admin API client, and the simulated agents (bench/gateway/agents-worker.ts) reporting when
// each revision reached them. The fleet itself (schema, CA, nodes, certificates, workers),
// /proc readings, cleanup and publishing come from bench/common.
import { writeFileSync } from 'node:fs';
import type { AppProcess } from '@svc/testkit';
import type { BenchDatabase, Installation } from '../common/database.ts';
import { type Fleet, productEnv, spawnProduct, startControlPlane, type Worker } from '../common/fleet.ts';
import { log } from '../common/run.ts';

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
  /** host:port agents dial (the first gateway replica's). */
  endpoint: string;
  /** Every gateway replica's host:port (split mode with `replicas`; else just `endpoint`). */
  endpoints: string[];
  /** The process holding the agents' streams (the all-in-one process, or the first control-plane). */
  gateway: { app: AppProcess; pid: number };
  /** Every process holding streams (the control-plane replicas). */
  gateways: Array<{ app: AppProcess; pid: number }>;
  /** The process serving the admin API (the same one in all-in-one mode). */
  admin: { app: AppProcess; pid: number };
  label: string;
  stop(): Promise<void>;
}

/**
 * all-in-one: `node --import tsx apps/cli/src/main.ts start` (admin API and gateway in one
 * process; Redis as its bus when one answers, else the in-memory bus). split: the admin-api
 * deployable and the control-plane deployable, talking over Redis (required).
 */
export async function startStack(
  mode: Mode,
  fleet: Fleet,
  opts: { logLevel?: string; gatewayEnv?: Record<string, string> /** Control-plane processes (split mode). */; replicas?: number } = {},
): Promise<Stack> {
  const logLevel = opts.logLevel ?? process.env.BENCH_LOG_LEVEL ?? 'info';
  const env = { ...productEnv(fleet), SVC_HTTP_HOST: '127.0.0.1', SVC_HTTP_PORT: '0', SVC_LOG_LEVEL: logLevel };
  if (mode === 'all-in-one') {
    const app = spawnProduct('bench/desired-state/all-in-one.ts', {
      ...env,
      SVC_GRPC_HOST: '127.0.0.1',
      SVC_GRPC_PORT: '0',
      ...opts.gatewayEnv,
    });
    const grpc = await app.waitForLog(/^agent gateway listening/, 60_000);
    const http = await app.waitForLog(/^listening on/, 60_000);
    const api = new Api(String(http.url));
    await signIn(api, app);
    const proc = { app, pid: app.child.pid as number };
    return {
      mode,
      api,
      endpoint: `127.0.0.1:${grpc.grpc_port}`,
      endpoints: [`127.0.0.1:${grpc.grpc_port}`],
      gateway: proc,
      gateways: [proc],
      admin: proc,
      label: `all-in-one (\`svc start\`: admin API and gateway in one process, ${fleet.redis ? 'Redis' : 'in-memory'} bus)`,
      stop: async () => void (await app.stop(15_000)),
    };
  }
  if (!fleet.redis) throw new Error('split mode needs Redis (REDIS_URL)');
  const adminApp = spawnProduct('apps/admin-api/src/main.ts', env);
  const http = await adminApp.waitForLog(/^admin-api listening on/, 60_000);
  const replicas = opts.replicas ?? 1;
  const cps: Array<Awaited<ReturnType<typeof startControlPlane>>> = [];
  for (let k = 0; k < replicas; k++) cps.push(await startControlPlane(fleet, { SVC_LOG_LEVEL: logLevel, ...opts.gatewayEnv }));
  const [cp] = cps as [(typeof cps)[number]];
  const api = new Api(String(http.url));
  await signIn(api, adminApp);
  return {
    mode,
    api,
    endpoint: cp.endpoint,
    endpoints: cps.map((c) => c.endpoint),
    gateway: { app: cp.app, pid: cp.pid },
    gateways: cps.map((c) => ({ app: c.app, pid: c.pid })),
    admin: { app: adminApp, pid: adminApp.child.pid as number },
    label:
      replicas === 1
        ? 'split (admin-api and control-plane processes, Redis bus)'
        : `split (admin-api and ${replicas} control-plane replicas, Redis bus; agents spread over the replicas as a TCP load balancer would)`,
    stop: async () => {
      for (const c of cps) await c.app.stop(15_000);
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
  /** Writes the spans to BENCH_PROFILE_WINDOWS (with `suffix` appended to the name, when given). */
  save(suffix = ''): void {
    if (process.env.BENCH_PROFILE_WINDOWS) writeFileSync(`${process.env.BENCH_PROFILE_WINDOWS}${suffix}`, JSON.stringify(this.spans));
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

/** Subscription i (1-based) as seedSubscriptions (bench/common/seed.ts) makes it. */
export const subscriptionId = (i: number) => `sub_${String(i).padStart(26, '0')}`;

// ---- agents

export interface Opened {
  opened: number;
  failed: number;
  failures: string[];
  latencies: number[];
  ms: number;
}

/**
 * Opens every worker's streams (each admitted with its first DesiredState), then turns arrival
 * recording on. With several endpoints (gateway replicas), worker i dials endpoints[i % n]: its
 * agents' connections spread over the replicas as a TCP load balancer's would.
 */
export async function openStreams(
  workers: Worker[],
  endpoint: string | readonly string[],
  inst: Installation,
  concurrency = 50,
): Promise<Opened[]> {
  const endpoints = typeof endpoint === 'string' ? [endpoint] : endpoint;
  const opened = await Promise.all(
    workers.map((w, i) => {
      w.send({
        type: 'streams',
        endpoint: endpoints[i % endpoints.length],
        caCertPem: inst.caCertPem,
        keyPem: inst.agent.keyPem,
        concurrency,
        statusPeriodMs: 30_000,
      });
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
