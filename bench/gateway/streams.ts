// `pnpm bench:gateway`: ONE control-plane process (apps/control-plane/src/main.ts, the
// split-mode deployable, over PostgreSQL: DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test,
// in a fresh schema; Redis when one answers at REDIS_URL) holding 10,000 concurrent mTLS Sync
// streams, opened by simulated agents in 4 worker processes (one TCP + TLS connection per
// node). Each stream: Hello, the DesiredState push and its ApplyResult, then a StatusReport
// every 30 s from a random phase. Records the time to open all streams, the gateway's RSS and
// CPU (user + sys from /proc, % of one core) idle (the baseline, same process, before any
// stream) and holding the streams over a steady 60 s window, status reports stored per second,
// errors; then checks that the database shows every node online.
import { sql } from 'kysely';
import { ourPostgresPids } from '../common/database.ts';
import { memoryOf, setUpFleet, startControlPlane, stopWorker, warnings as warningsOf } from '../common/fleet.ts';
import { type CpuGroups, cpuPercent, openFilesLimit, readCpu, rssBytes } from '../common/proc.ts';
import { env, loadNow, log, main, mib, n, pct, publish, setting, sleep } from '../common/run.ts';

const STREAMS = env('BENCH_STREAMS', 10_000);
const WORKERS = env('BENCH_WORKERS', 4);
/** Streams each worker opens at a time. */
const OPEN_CONCURRENCY = env('BENCH_OPEN_CONCURRENCY', 50);
const STATUS_PERIOD_S = env('BENCH_STATUS_PERIOD', 30);
const IDLE_SECONDS = env('BENCH_IDLE_SECONDS', 30);
const WINDOW_SECONDS = env('BENCH_WINDOW_SECONDS', 60);
/**
 * The C allocator the processes run with, when not glibc's as it is: LD_PRELOAD (jemalloc, an
 * experiment on memory per stream) or MALLOC_ARENA_MAX reach every process of the run.
 */
const ALLOCATOR = [
  process.env.LD_PRELOAD ? `experiment: LD_PRELOAD=${process.env.LD_PRELOAD}` : '',
  process.env.MALLOC_ARENA_MAX ? `experiment: MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX}` : '',
]
  .filter(Boolean)
  .join(', ');

interface Opened {
  opened: number;
  failed: number;
  failures: string[];
  latencies: number[];
  ms: number;
}
interface Counters {
  statusSent: number;
  lost: number;
  lostSample: string[];
  open: number;
}

await main(async () => {
  // The gateway holds one socket per stream, each agent process its share: all inherit our limit.
  const fds = openFilesLimit();
  if (fds < STREAMS + 1000 || fds < STREAMS / WORKERS + 1000) {
    throw new Error(
      `ulimit -n is ${fds}: the gateway needs one file descriptor per stream (${STREAMS}) and more; raise it (ulimit -n 20000)`,
    );
  }
  // One client certificate per node (CN = node id), signed by the CA in the workers, in parallel.
  const fleet = await setUpFleet({ nodes: STREAMS, workers: WORKERS });
  const { loadBefore, database, redis, inst, workers } = fleet;

  const cp = await startControlPlane(fleet);
  log(`control plane pid ${cp.pid} on ${cp.endpoint}`);

  const workerPids = workers.map((w) => w.proc.pid as number);
  const groups: CpuGroups = { gateway: () => [cp.pid], postgres: () => ourPostgresPids(database.pool), agents: () => workerPids };

  // Baseline: the same process, idle (its timers run: heartbeat, reconciliation), before any stream.
  await sleep(5000);
  const idle0 = await readCpu(groups);
  await sleep(IDLE_SECONDS * 1000);
  const idle = cpuPercent(idle0, await readCpu(groups));
  const idleCpu = idle.gateway as number;
  const rssIdle = rssBytes(cp.pid);
  const memIdle = await memoryOf(cp);
  log(`idle: RSS ${mib(rssIdle)} MiB, CPU ${idleCpu.toFixed(1)}%`);

  // Open every stream.
  const progress = new Map<number, number>();
  for (const [i, w] of workers.entries()) w.on('progress', (m) => progress.set(i, m.opened));
  const ticker = setInterval(() => log(`open: ${n([...progress.values()].reduce((a, b) => a + b, 0))}`), 5000);
  const open0 = await readCpu(groups);
  const tOpen = performance.now();
  const opened = await Promise.all(
    workers.map((w) => {
      w.send({
        type: 'streams',
        endpoint: cp.endpoint,
        caCertPem: inst.caCertPem,
        keyPem: inst.agent.keyPem,
        concurrency: OPEN_CONCURRENCY,
        statusPeriodMs: STATUS_PERIOD_S * 1000,
      });
      return w.next<Opened>('opened');
    }),
  );
  const openSeconds = (performance.now() - tOpen) / 1000;
  const openCpu = cpuPercent(open0, await readCpu(groups));
  clearInterval(ticker);
  const openCount = opened.reduce((a, o) => a + o.opened, 0);
  const openFailed = opened.reduce((a, o) => a + o.failed, 0);
  const openLat = opened.flatMap((o) => o.latencies);
  log(`${n(openCount)} streams open in ${openSeconds.toFixed(1)} s (${openFailed} failed) ${opened.flatMap((o) => o.failures).join('; ')}`);

  // Settle: every stream is past its first (random-phase) StatusReport.
  await sleep(STATUS_PERIOD_S * 1000);
  const rssWith = rssBytes(cp.pid);
  const memWith = await memoryOf(cp);

  // Steady window.
  const counters = () =>
    Promise.all(
      workers.map((w) => {
        w.send({ type: 'counters' });
        return w.next<Counters>('counters');
      }),
    );
  const updates = async () =>
    Number(
      (
        await database.pool.query(`select n_tup_upd from pg_stat_user_tables where schemaname = $1 and relname = 'nodes'`, [
          database.schema,
        ])
      ).rows[0]?.n_tup_upd ?? 0,
    );
  const c0 = await counters();
  const u0 = await updates();
  const cpu0 = await readCpu(groups);
  const t0 = performance.now();
  log(`steady window: ${WINDOW_SECONDS} s`);
  await sleep(WINDOW_SECONDS * 1000);
  const seconds = (performance.now() - t0) / 1000;
  const steady = cpuPercent(cpu0, await readCpu(groups));
  const cpuWith = steady.gateway as number;
  const rssEnd = rssBytes(cp.pid);
  // Statistics reach pg_stat_user_tables about a second after a transaction: both ends of the
  // window lag alike, so the count covers a window of the same length.
  const u1 = await updates();
  const c1 = await counters();
  const sent = c1.reduce((a, c) => a + c.statusSent, 0) - c0.reduce((a, c) => a + c.statusSent, 0);
  const stored = u1 - u0;
  const lost = c1.reduce((a, c) => a + c.lost, 0);
  const stillOpen = c1.reduce((a, c) => a + c.open, 0);

  // What the database shows.
  const row = (
    await sql<{ online: number; fresh: number }>`
      select count(*) filter (where connectivity = 'online') as online,
             count(*) filter (where last_status_at > now() - make_interval(secs => ${STATUS_PERIOD_S + 5})) as fresh
        from nodes`.execute(database.db)
  ).rows[0] as { online: number; fresh: number };
  const warnings = warningsOf(cp.app);
  log(`online ${row.online}, fresh status ${row.fresh}, gateway warnings ${warnings.length}`);
  for (const w of warnings.slice(0, 5)) log(`  ${w.slice(0, 300)}`);

  // Agents leave, then the gateway stops cleanly: its nodes go offline.
  const tClose = performance.now();
  await Promise.all(workers.map((w) => stopWorker(w)));
  for (let i = 0; i < 60; i++) {
    const online = Number(
      (await sql<{ n: number }>`select count(*) as n from nodes where connectivity = 'online'`.execute(database.db)).rows[0]?.n,
    );
    if (online === 0) break;
    await sleep(500);
  }
  const closeSeconds = (performance.now() - tClose) / 1000;
  const loadAfter = loadNow();

  const errors = openFailed + lost + warnings.length;
  const f1 = (x: number) => x.toFixed(1);
  const perStream = (bytes: number) => f1(bytes / STREAMS / 1024);
  const cpuLine = (c: Record<string, number>) =>
    `gateway ${f1(c.gateway as number)}%, PostgreSQL (our backends and its writers) ${f1(c.postgres as number)}%, agents ${f1(c.agents as number)}%, other work on the machine ${f1(c.other as number)}%`;
  publish([
    `### ${new Date().toISOString().slice(0, 10)} — gateway, ${n(STREAMS)} mTLS Sync streams, one control-plane process, PostgreSQL${redis ? ' + Redis' : ''}${ALLOCATOR ? ` — ${ALLOCATOR}` : ''}`,
    '',
    setting(database.serverVersion, { before: loadBefore, after: loadAfter }) +
      `Agents: ${WORKERS} worker processes × ${n(STREAMS / WORKERS)} streams (grpc-js, one channel each), ${OPEN_CONCURRENCY} opens at a time per worker, ` +
      `StatusReport every ${STATUS_PERIOD_S} s per stream; gateway defaults otherwise (database pool 10, reconciliation and heartbeat every 5 s).`,
    '',
    '| measure | figure |',
    '|---|---|',
    `| open ${n(STREAMS)} streams (TLS handshake, Hello, admission, DesiredState, ApplyResult) | ${f1(openSeconds)} s (${n(openCount / openSeconds)} streams/s; per stream p50 ${n(pct(openLat, 50))} ms, p99 ${n(pct(openLat, 99))} ms; CPU meanwhile: ${cpuLine(openCpu)}) |`,
    `| baseline: gateway idle, before streams: RSS / CPU (${IDLE_SECONDS} s) | ${mib(rssIdle)} MiB / ${f1(idleCpu)}% (other work on the machine meanwhile ${f1(idle.other as number)}%) |`,
    `| gateway with ${n(STREAMS)} streams: RSS after settling / at the end of the window | ${mib(rssWith)} / ${mib(rssEnd)} MiB |`,
    `| RSS per stream ((with − idle) ÷ streams) | ${f1((rssWith - rssIdle) / STREAMS / 1024)} KiB |`,
    `| of which, per stream: JS heap used / external (incl. array buffers) / the rest (native: TLS, HTTP/2, allocator) | ${perStream(memWith.heapUsed - memIdle.heapUsed)} / ${perStream(memWith.external - memIdle.external)} / ${perStream(memWith.rss - memIdle.rss - (memWith.heapTotal - memIdle.heapTotal) - (memWith.external - memIdle.external))} KiB (heap total ${mib(memIdle.heapTotal)} → ${mib(memWith.heapTotal)} MiB) |`,
    `| CPU with ${n(STREAMS)} streams, steady ${Math.round(seconds)} s window (% of one core) | ${cpuLine(steady)} |`,
    `| status reports sent / stored per s (stored: nodes row updates in pg_stat_user_tables) | ${n(sent / seconds)} / ${n(stored / seconds)} (expected ${n(STREAMS / STATUS_PERIOD_S)}) |`,
    `| gateway CPU per status report ((with − idle) ÷ reports/s) | ${(((cpuWith - idleCpu) / 100 / (stored / seconds)) * 1e6).toFixed(0)} µs |`,
    `| database at the end: nodes online / with a status of the last ${STATUS_PERIOD_S + 5} s | ${n(row.online)} / ${n(row.fresh)} of ${n(STREAMS)} |`,
    `| errors: opens failed / streams lost after opening / gateway warn+error log lines | ${openFailed} / ${lost} / ${warnings.length} |`,
    `| agents leave: all nodes offline after | ${f1(closeSeconds)} s |`,
    '',
    errors > 0 || row.online !== STREAMS || stillOpen !== STREAMS
      ? `Errors: ${[...opened.flatMap((o) => o.failures), ...c1.flatMap((c) => c.lostSample), ...warnings.slice(0, 3)].join('; ') || `${stillOpen} streams open at the end`}`
      : `No errors: all ${n(STREAMS)} streams stayed open through the window and the database showed all ${n(STREAMS)} nodes online.`,
  ]);
});
