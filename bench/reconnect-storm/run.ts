// `pnpm bench:reconnect-storm` (issue 17.3): 10,000 nodes with agents, all in sync; then the
// control-plane process is killed (SIGKILL) and started again on the same port, and the bench
// measures how long until every node is back in sync: its stream open on the new process (the
// node row online, opened after the kill) and its applied revision equal to its desired one, in
// the database. Nodes that never come back (within BENCH_STORM_TIMEOUT s) are counted. The
// admin API, a separate process (split mode, Redis bus), is asked GET /api/v1/nodes?limit=20
// every 100 ms throughout, and its latency is recorded during the storm and, as its baseline,
// in the quiet seconds before the kill.
//
// The agents (bench/reconnect-storm/storm-agent.ts in the agents workers of bench/common/fleet.ts)
// reconnect on their own as apps/agent does: its TLS credentials, its backoff, its reading of the
// gateway's retry hint. Phases, each from a fleet in sync, in the same run:
//   1. as shipped: TLS session resumption, admission line at its defaults;
//   2. baseline: the agents offer no TLS session (full handshakes), admission line on;
//   3. baseline: full handshakes and no admission line (before issue 17.3).
// BENCH_STORM_PHASES=1,2 picks some. Small runs: BENCH_STORM_NODES=500 BENCH_STORM_WORKERS=2.
// The gateway runs from its precompiled start, apps/control-plane/dist/main.js under plain node
// (the package script builds it first); BENCH_STORM_GATEWAY=tsx runs src/main.ts under tsx instead.
// net.core.somaxconn caps every listen backlog, the gateway's grpc.listen_backlog (16,384)
// included: the bench raises it to BENCH_STORM_SOMAXCONN (16384; 0 leaves it) for the run, as
// an operator would on a gateway host (docs/scale.md), restores it at the end, and records what
// was used.
import { readFileSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { loadConfig } from '@svc/config';
import { sql } from 'kysely';
import { ourPostgresPids } from '../common/database.ts';
import { productEnv, setUpFleet, spawnProduct, startControlPlane, stopWorker, warnings as warningsOf } from '../common/fleet.ts';
import { type CpuGroups, cpuDelta, cpuPercent, cpuSeconds, machineBusySeconds, openFilesLimit, readCpu } from '../common/proc.ts';
import { env, loadNow, log, main, n, onCleanup, pct, publish, setting, sleep } from '../common/run.ts';
import { freePortNumber } from './ports.ts';

const NODES = env('BENCH_STORM_NODES', 10_000);
const WORKERS = env('BENCH_STORM_WORKERS', 4);
const OPEN_CONCURRENCY = env('BENCH_OPEN_CONCURRENCY', 50);
const TIMEOUT_S = env('BENCH_STORM_TIMEOUT', 180);
const QUIET_S = env('BENCH_STORM_QUIET_SECONDS', 10);
const TARGET_S = 30;
/**
 * The simulated agents run at this nice value (BENCH_STORM_AGENTS_NICE, 10): on a fleet they
 * have machines of their own, here they share the gateway's two cores, and at equal priority
 * four agent processes took ~1.6 cores while the restarted gateway got ~0.3 in the storm's first
 * seconds. Niced, they still get every cycle the product leaves.
 */
const AGENTS_NICE = env('BENCH_STORM_AGENTS_NICE', 10);
const FROM_SOURCE = process.env.BENCH_STORM_GATEWAY === 'tsx';
const GATEWAY_ENTRY = FROM_SOURCE ? 'apps/control-plane/src/main.ts' : 'apps/control-plane/dist/main.js';
const GATEWAY_START = FROM_SOURCE
  ? 'node --import tsx apps/control-plane/src/main.ts'
  : 'node apps/control-plane/dist/main.js (the precompiled build, infra/bundle-app.mjs)';
/** The gateway's defaults, as the product reads them. */
const g = loadConfig({}).grpc;

interface Phase {
  id: number;
  label: string;
  resume: boolean;
  env: Record<string, string>;
}
const PHASES: Phase[] = [
  { id: 1, label: 'TLS session resumption, admission line (defaults)', resume: true, env: {} },
  { id: 2, label: 'baseline: full TLS handshakes (agents offer no session), admission line', resume: false, env: {} },
  {
    id: 3,
    label: 'baseline: full TLS handshakes, no admission line (as before issue 17.3)',
    resume: false,
    env: { SVC_GRPC_ADMISSIONS_PER_SECOND: '100000', SVC_GRPC_ADMISSION_CONCURRENCY: '1024' },
  },
];
const chosen = (process.env.BENCH_STORM_PHASES ?? '1,2,3').split(',').map(Number);
/** BENCH_STORM_ENV="SVC_X=1,SVC_Y=2": settings for the gateway in every phase (exploring; recorded in the entry). */
const EXTRA_ENV: Record<string, string> = Object.fromEntries(
  (process.env.BENCH_STORM_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => kv.split('=') as [string, string]),
);

interface StormStats {
  attempts: number;
  ended: number;
  pushbacks: number;
  refusedOther: number;
  endSample: string[];
  endings: Record<string, number>;
  full: number;
  resumed: number;
  open: number;
}

interface Result {
  phase: Phase;
  backAt: Map<number, number>;
  back: number;
  allBackS: number | null;
  listeningS: number;
  admin: { quiet: number[]; storm: number[]; errors: number; stormErrors: number };
  cpu: Record<string, number>;
  gatewayCpuS: number;
  gatewayStartCpuS: number;
  agents: StormStats;
  turnedAway: number;
  longestWaitMs: number;
  warnings: string[];
  load: string;
  /** Every 5 s after the kill: nodes back, and % of one core over those 5 s (gateway, agents, whole machine). */
  timeline: Array<{ s: number; back: number; gateway: number; agents: number; machine: number }>;
  /** TcpExtListenOverflows / ListenDrops from the kill to all back (the machine's, every listener). */
  listenOverflows: number;
  listenDrops: number;
}

await main(async () => {
  const fds = openFilesLimit();
  if (fds < NODES + 1000 || fds < NODES / WORKERS + 1000)
    throw new Error(
      `ulimit -n is ${fds}: the gateway needs one file descriptor per stream (${NODES}) and more; raise it (ulimit -n 20000)`,
    );
  const somaxconn = raiseSomaxconn(env('BENCH_STORM_SOMAXCONN', 16_384));
  log(somaxconn);
  const fleet = await setUpFleet({ nodes: NODES, workers: WORKERS });
  const { database, inst, workers, loadBefore } = fleet;
  if (!fleet.redis) throw new Error('the storm runs the admin API and the gateway as separate processes: it needs Redis (REDIS_URL)');
  const port = await freePortNumber();
  const grpcEnv = { SVC_GRPC_PORT: String(port), SVC_LOG_LEVEL: 'info', ...EXTRA_ENV };

  // The admin API, its own process, with an owner signed in.
  const adminApp = spawnProduct('apps/admin-api/src/main.ts', { ...productEnv(fleet), SVC_HTTP_HOST: '127.0.0.1', SVC_HTTP_PORT: '0' });
  const base = String((await adminApp.waitForLog(/^admin-api listening on/, 60_000)).url);
  const setupToken = String((await adminApp.waitForLog(/^bootstrap mode/, 30_000)).setup_token);
  const owner = { email: 'bench-owner@example.com', password: 'bench-password-0123456789' };
  await post(base, '/api/v1/setup', { token: setupToken, ...owner });
  const signIn = async () => (await post(base, '/api/v1/auth/login', owner)).access_token as string;

  let cp = await startControlPlane(fleet, grpcEnv, GATEWAY_ENTRY);
  log(`control plane pid ${cp.pid} on ${cp.endpoint}; admin API ${base}`);
  const workerPids = workers.map((w) => w.proc.pid as number);
  for (const pid of workerPids) setPriority(pid, AGENTS_NICE);
  const groups: CpuGroups = {
    gateway: () => [cp.pid],
    postgres: () => ourPostgresPids(database.pool),
    agents: () => workerPids,
    admin: () => [adminApp.child.pid as number],
  };
  const inSyncSince = async (since: Date) =>
    Number(
      (
        await sql<{ n: string }>`select count(*) as n from nodes
          where connectivity = 'online' and stream_opened_at >= ${since} and applied_revision = desired_revision`.execute(database.db)
      ).rows[0]?.n,
    );
  const stats = () =>
    Promise.all(
      workers.map((w) => {
        w.send({ type: 'storm-stats' });
        return w.next<StormStats>('storm-stats');
      }),
    ).then((all) =>
      all.reduce((a, s) => ({
        attempts: a.attempts + s.attempts,
        ended: a.ended + s.ended,
        pushbacks: a.pushbacks + s.pushbacks,
        refusedOther: a.refusedOther + s.refusedOther,
        endSample: [...a.endSample, ...s.endSample].slice(0, 5),
        endings: Object.fromEntries(
          [...new Set([...Object.keys(a.endings), ...Object.keys(s.endings)])].map((k) => [k, (a.endings[k] ?? 0) + (s.endings[k] ?? 0)]),
        ),
        full: a.full + s.full,
        resumed: a.resumed + s.resumed,
        open: a.open + s.open,
      })),
    );

  // Every node opens its stream (a full handshake, the DesiredState and its ApplyResult): the
  // fleet in sync that a restart will scatter.
  const t0 = performance.now();
  const opened = await Promise.all(
    workers.map((w) => {
      w.send({
        type: 'storm-open',
        endpoint: cp.endpoint,
        caCertPem: inst.caCertPem,
        keyPem: inst.agent.keyPem,
        concurrency: OPEN_CONCURRENCY,
      });
      return w.next<{ opened: number; failed: number }>('storm-opened', 900_000);
    }),
  );
  const openS = (performance.now() - t0) / 1000;
  const openFailed = opened.reduce((a, o) => a + o.failed, 0);
  log(`${n(NODES - openFailed)} streams open in ${openS.toFixed(1)} s (${openFailed} failed)`);
  const initial = await stats();
  log(`initial: handshakes ${JSON.stringify({ full: initial.full, resumed: initial.resumed, attempts: initial.attempts })}`);

  const results: Result[] = [];
  for (const phase of PHASES.filter((p) => chosen.includes(p.id))) {
    await Promise.all(
      workers.map((w) => {
        w.send({ type: 'storm-resume', resume: phase.resume });
        return w.next('storm-resumed');
      }),
    );
    // A fleet in sync, every agent holding a ticket from its last handshake.
    const ready = await waitFor(async () => (await inSyncSince(new Date(0))) >= NODES - openFailed, 300_000);
    if (!ready) log('not every node was in sync before the kill');
    await sleep(5000);
    await stats();
    const token = await signIn();
    const probe = adminProbe(base, token);
    await sleep(QUIET_S * 1000);
    const quiet = probe.take();
    const load = loadNow();

    log(`phase ${phase.id}: ${phase.label}: kill -9 ${cp.pid}`);
    const c0 = await readCpu(groups);
    const net0 = listenCounters();
    const killedAt = new Date();
    const tKill = performance.now();
    const oldApp = cp.app;
    process.kill(cp.pid, 'SIGKILL');
    await oldApp.exited;
    cp = await startControlPlane(fleet, { ...grpcEnv, ...phase.env }, GATEWAY_ENTRY);
    const listeningS = (performance.now() - tKill) / 1000;
    const cListening = await readCpu(groups);
    const spanStart = process.hrtime.bigint() / 1000n;
    const backAt = new Map<number, number>();
    let back = 0;
    let allBackS: number | null = null;
    const marks = [0.5, 0.9, 0.99, 1];
    const timeline: Result['timeline'] = [];
    const agentsCpu = () => workerPids.reduce((a, p) => a + cpuSeconds(p), 0);
    let tick = { s: 0, gateway: 0, agents: agentsCpu(), machine: machineBusySeconds() };
    while ((performance.now() - tKill) / 1000 < TIMEOUT_S) {
      back = await inSyncSince(killedAt);
      const s = (performance.now() - tKill) / 1000;
      if (s >= tick.s + 5) {
        const now = { s, gateway: cpuSeconds(cp.pid), agents: agentsCpu(), machine: machineBusySeconds() };
        const span = (now.s - tick.s) / 100;
        timeline.push({
          s,
          back,
          gateway: (now.gateway - tick.gateway) / span,
          agents: (now.agents - tick.agents) / span,
          machine: (now.machine - tick.machine) / span,
        });
        tick = now;
      }
      for (const m of marks) if (!backAt.has(m) && back >= Math.ceil(m * NODES)) backAt.set(m, s);
      if (back >= NODES) {
        allBackS = s;
        break;
      }
      await sleep(250);
    }
    const c1 = await readCpu(groups);
    const net1 = listenCounters();
    const storm = probe.take();
    // BENCH_CPU_PROFILE (with cpu-profile.mjs preloaded, bench/gateway): the gateway's profile
    // and, in BENCH_PROFILE_WINDOWS, the span from listening to all back, for profile-report.mjs.
    if (process.env.BENCH_CPU_PROFILE) {
      const from = cp.app.lines.length;
      process.kill(cp.pid, 'SIGWINCH');
      await waitFor(async () => cp.app.lines.slice(from).some((l) => l.includes('bench cpu profile written')), 30_000);
      if (process.env.BENCH_PROFILE_WINDOWS)
        writeFileSync(
          `${process.env.BENCH_PROFILE_WINDOWS}.${phase.id}`,
          JSON.stringify([[String(spanStart), String(process.hrtime.bigint() / 1000n)]]),
        );
    }
    probe.stop();
    const agents = await stats();
    const lines = cp.app.lines.filter((l) => l.includes('"admission line"')).map((l) => JSON.parse(l) as Record<string, number>);
    const r: Result = {
      phase,
      backAt,
      back,
      allBackS,
      listeningS,
      admin: { quiet: quiet.ms, storm: storm.ms, errors: quiet.errors, stormErrors: storm.errors },
      cpu: cpuPercent(c0, c1),
      gatewayCpuS: cpuDelta(cListening.groups.gateway ?? new Map(), c1.groups.gateway ?? new Map()),
      gatewayStartCpuS: cpuDelta(new Map(), cListening.groups.gateway ?? new Map()),
      agents,
      turnedAway: lines.reduce((a, l) => a + (l.turned_away ?? 0), 0),
      longestWaitMs: Math.max(0, ...lines.map((l) => l.longest_wait_ms ?? 0)),
      warnings: warningsOf(cp.app),
      load,
      timeline,
      listenOverflows: net1.overflows - net0.overflows,
      listenDrops: net1.drops - net0.drops,
    };
    results.push(r);
    log(
      `phase ${phase.id}: ${n(back)} of ${n(NODES)} back in sync${allBackS === null ? ` (timeout ${TIMEOUT_S} s)` : ` after ${allBackS.toFixed(1)} s`}; ` +
        `handshakes resumed ${n(agents.resumed)} / full ${n(agents.full)}; admin p99 ${pct(storm.ms, 99).toFixed(1)} ms`,
    );
  }
  const loadAfter = loadNow();
  await Promise.all(workers.map((w) => stopWorker(w)));

  const f1 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(1));
  const msf = (xs: number[], p: number) => (xs.length ? f1(pct(xs, p)) : '–');
  const row = (r: Result) => {
    const per = r.agents.full + r.agents.resumed;
    return [
      `| ${r.phase.id}. ${r.phase.label}`,
      r.allBackS === null ? `**not all**: ${n(r.back)} of ${n(NODES)} in ${TIMEOUT_S} s` : `${f1(r.allBackS)} s`,
      `${f1(r.backAt.get(0.5))} / ${f1(r.backAt.get(0.9))} / ${f1(r.backAt.get(0.99))} s`,
      `${n(NODES - r.back)}`,
      `${f1(r.listeningS)} s (${f1(r.gatewayStartCpuS)} CPU s)`,
      `${n(r.agents.resumed)} / ${n(r.agents.full)}`,
      `${n(r.agents.attempts)} (${n(r.agents.pushbacks)} told to come back later)`,
      `${msf(r.admin.storm, 50)} / ${msf(r.admin.storm, 99)} / ${r.admin.storm.length ? f1(Math.max(...r.admin.storm)) : '–'} ms (${n(r.admin.storm.length)} GETs, ${r.admin.stormErrors} failed); quiet before: ${msf(r.admin.quiet, 50)} / ${msf(r.admin.quiet, 99)} ms`,
      `${f1(r.cpu.gateway)}% / ${f1(r.cpu.postgres)}% / ${f1(r.cpu.agents)}% / ${f1(r.cpu.admin)}% / ${f1(r.cpu.other)}%`,
      `${per > 0 ? ((r.gatewayCpuS / per) * 1000).toFixed(2) : '–'} ms (${f1(r.gatewayCpuS)} s)`,
      `${r.load} |`,
    ].join(' | ');
  };
  const all = results.every((r) => r.allBackS !== null && r.allBackS < TARGET_S);
  publish([
    `### ${new Date().toISOString().slice(0, 10)} — reconnect storm, ${n(NODES)} agents, control plane killed (SIGKILL) and restarted, PostgreSQL + Redis`,
    '',
    setting(database.serverVersion, { before: loadBefore, after: loadAfter }) +
      `Agents: ${WORKERS} worker processes × ${n(NODES / WORKERS)} at nice ${AGENTS_NICE} (grpc-js, one connection each; apps/agent's TLS credentials, backoff and retry-hint rule; Hello with the applied revision, a StatusReport on open and every 30 s). ` +
      `Admin API: its own process (split mode, Redis bus), GET /api/v1/nodes?limit=20 every 100 ms. Gateway: one control-plane process started as ${GATEWAY_START}, defaults unless the phase says otherwise (TLS tickets for ${g.tls_session_lifetime_seconds / 86_400} days; admission line ${g.admissions_per_second}/s, ${g.admission_concurrency} at once, ${g.admission_max_wait_seconds} s longest wait; database pool 10)${Object.keys(EXTRA_ENV).length ? `; in every phase ${process.env.BENCH_STORM_ENV}` : ''}. Kernel: ${somaxconn}; net.ipv4.tcp_max_syn_backlog ${sysctl('net/ipv4/tcp_max_syn_backlog')}, tcp_syncookies ${sysctl('net/ipv4/tcp_syncookies')}.`,
    '',
    `Before the phases: ${n(NODES)} streams opened from scratch (full handshake, DesiredState, ApplyResult), ${OPEN_CONCURRENCY} at a time per worker: ${openS.toFixed(1)} s (${n((NODES - openFailed) / openS)} streams/s), ${openFailed} failed.`,
    '',
    `| phase | all ${n(NODES)} back in sync after the kill (target < ${TARGET_S} s) | 50% / 90% / 99% back | never back | restart: kill → gateway listening (its start-up CPU) | TLS handshakes resumed / full | agents' attempts | admin GET during the storm p50 / p99 / max | CPU kill → all back, % of one core: gateway / PostgreSQL / agents / admin API / other | gateway CPU per reconnect after listening | load before the kill |`,
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...results.map(row),
    '',
    ...results.map(
      (r) =>
        `Phase ${r.phase.id}: admission line turned away ${n(r.turnedAway)}, longest wait in line ${n(r.longestWaitMs)} ms; ` +
        `how the agents' streams and attempts ended: ${
          Object.entries(r.agents.endings)
            .sort((a, b) => b[1] - a[1])
            .map(([k, v]) => `${n(v)} × ${k}`)
            .join('; ') || 'none'
        }; streams ended otherwise than UNAVAILABLE ${n(r.agents.refusedOther)}${r.agents.endSample.length ? ` (${r.agents.endSample.join('; ')})` : ''}; ` +
        `gateway warn+error lines ${r.warnings.length}${r.warnings.length ? ` (${r.warnings.slice(0, 2).join(' ').slice(0, 300)})` : ''}; ` +
        `listen queue overflows ${n(r.listenOverflows)}, drops ${n(r.listenDrops)} (TcpExt, kill to all back). ` +
        `Timeline, s after the kill: nodes back (% of one core in the 5 s before: gateway / agents / whole machine): ${r.timeline
          .map((t) => `${t.s.toFixed(0)} s: ${n(t.back)} (${t.gateway.toFixed(0)} / ${t.agents.toFixed(0)} / ${t.machine.toFixed(0)})`)
          .join('; ')}.`,
    ),
    '',
    all
      ? `Every phase: all ${n(NODES)} back in sync within ${TARGET_S} s.`
      : `Target (all back within ${TARGET_S} s) not met in every phase: see the table.`,
  ]);
});

/** The kernel's listen-queue counters (TcpExt ListenOverflows, ListenDrops): since boot, every listener. */
function listenCounters(): { overflows: number; drops: number } {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('TcpExt:'));
    const names = (lines[0] ?? '').split(/\s+/);
    const values = (lines[1] ?? '').split(/\s+/).map(Number);
    const get = (k: string) => values[names.indexOf(k)] ?? 0;
    return { overflows: get('ListenOverflows'), drops: get('ListenDrops') };
  } catch {
    return { overflows: Number.NaN, drops: Number.NaN };
  }
}

function sysctl(name: string): string {
  try {
    return readFileSync(`/proc/sys/${name}`, 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

/** Sets net.core.somaxconn to `to` for the run (restored on the way out); says what the run used. */
function raiseSomaxconn(to: number): string {
  const path = '/proc/sys/net/core/somaxconn';
  const was = sysctl('net/core/somaxconn');
  if (!to || String(to) === was) return `net.core.somaxconn ${was} (as found)`;
  try {
    writeFileSync(path, String(to));
  } catch (err) {
    return `net.core.somaxconn ${was} (as found; raising it to ${to} failed: ${(err as Error).message})`;
  }
  onCleanup(async () => writeFileSync(path, was));
  return `net.core.somaxconn ${sysctl('net/core/somaxconn')} for this run (was ${was}, restored after)`;
}

async function post(base: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/** GET /api/v1/nodes?limit=20 every 100 ms (not waiting for the previous one); `take` hands over the latencies since the last take. */
function adminProbe(base: string, token: string) {
  let ms: number[] = [];
  let errors = 0;
  const timer = setInterval(() => {
    const t = performance.now();
    fetch(`${base}/api/v1/nodes?limit=20`, { headers: { authorization: `Bearer ${token}` } })
      .then(async (res) => {
        await res.arrayBuffer();
        if (!res.ok) errors++;
        else ms.push(performance.now() - t);
      })
      .catch(() => errors++);
  }, 100);
  return {
    take() {
      const out = { ms, errors };
      ms = [];
      errors = 0;
      return out;
    },
    stop: () => clearInterval(timer),
  };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if (await check()) return true;
    await sleep(500);
  }
  return false;
}
