// `pnpm bench:usage`: usage ingestion through the real gateway. On PostgreSQL (DATABASE_URL,
// default postgres://postgres@127.0.0.1:5432/test, a fresh schema): 50,000 subscriptions and 8
// enrolled nodes seeded directly; the control-plane deployable in a child process; simulated
// agents in 2 worker processes send UsageReports of 5,000 entries over their mTLS Sync
// streams, all nodes at once, each report acknowledged (UsageAck) before the node's next, for
// 30 s after a 5 s warm-up. Records entries/s sustained (target ≥ 100,000), p50/p99 ack
// latency, where the CPU goes (gateway, PostgreSQL, agents); verifies exactly-once (the sum of
// used_bytes, of lifetime_used_bytes and of the hourly rows equals the sum of every delta
// acknowledged; replayed and older report ids are acknowledged and change nothing). An
// acknowledgement means staged (usage_inbox); the gateway's fold credits staged reports, so a
// phase through the gateway ends when the fold has credited everything acknowledged in it.
// In the same run, with the gateway stopped: the domain's ingestUsageReport called in-process
// (no gRPC), a bare multi-row upsert of the same rows through pg (UPDATE subscriptions +
// INSERT … ON CONFLICT DO UPDATE into usage_hourly, one transaction per batch), and the
// domain's statements timed one by one on one connection.
import { connectDatabase } from '@svc/db';
import { COUNTER_CEILING, ingestUsageReport, type UsageDelta } from '@svc/domain';
import { AgentMessage } from '@svc/proto';
import type pg from 'pg';
import { benchDatabaseUrl, benchDeps, ourPostgresPids } from '../common/database.ts';
import { setUpFleet, startControlPlane, stopWorker, warnings as warningsOf } from '../common/fleet.ts';
import { type CpuGroups, type CpuReading, cpuPercent, readCpu } from '../common/proc.ts';
import { env, loadNow, log, main, n, onCleanup, pct, publish, setting } from '../common/run.ts';
import { seedClients, seedServingPartitions, seedSubscriptions } from '../common/seed.ts';
import { reportColumns, subscriptionId } from './usage-plan.ts';

const SUBSCRIPTIONS = env('BENCH_SUBSCRIPTIONS', 50_000);
const CLIENTS = env('BENCH_CLIENTS', 5_000);
const NODES = env('BENCH_NODES', 8);
const ENTRIES = env('BENCH_ENTRIES', 5_000);
const SECONDS = env('BENCH_SECONDS', 30);
const WARMUP = env('BENCH_WARMUP_SECONDS', 5);
// Every phase runs as long as the others: without vacuum during a run (autovacuum does not
// keep up within seconds; it is off on the test server), dead row versions pile up and each
// report costs PostgreSQL more the longer a run lasts, so only runs of one length compare.
const BASELINE_SECONDS = env('BENCH_BASELINE_SECONDS', SECONDS);
const WORKERS = env('BENCH_WORKERS', 2);
const STATEMENT_SAMPLES = env('BENCH_STATEMENT_SAMPLES', 20);
/**
 * 0 (the default): each node's next report as soon as its last is acknowledged (the most the
 * gateway takes). Above 0, through the gateway only: paced as real agents report, each user once
 * every BENCH_USER_EVERY_S seconds (a million users every 10 s: 100,000 entries/s offered).
 */
const USER_EVERY_S = env('BENCH_USER_EVERY_S', 0);
/** Fewer nodes at once through the gateway, after the main run, same length (BENCH_SWEEP=1,2,4; empty for none). */
const SWEEP = (process.env.BENCH_SWEEP ?? '2').split(',').filter(Boolean).map(Number);
const TARGET = 100_000;
/** Experiment, not the schema's setting: BENCH_FILLFACTOR=70 sets the free room on each page of subscription_counters and usage_hourly for HOT updates (the schema's: 80). */
const FILLFACTOR = process.env.BENCH_FILLFACTOR ? Number(process.env.BENCH_FILLFACTOR) : undefined;
/** The gateway's database pool (config default), used by the in-process baseline too. */
const GATEWAY_POOL = 10;

type Ack = [number, number, number, number];

/**
 * Every phase starts from the same state, whatever ran before: counters at zero, no hourly
 * rows, the counters table (subscription_counters) packed (VACUUM FULL), then every row rewritten once and the
 * table vacuumed (so, as on a live installation, pages hold the free space of dead versions),
 * statistics fresh, a checkpoint just done.
 */
async function reset(pool: pg.Pool): Promise<void> {
  await pool.query('truncate usage_hourly, usage_inbox');
  await pool.query('vacuum full subscription_counters');
  await pool.query(
    'update subscription_counters set used_bytes = 0, period_uplink_bytes = 0, period_downlink_bytes = 0, lifetime_used_bytes = 0',
  );
  await pool.query('update nodes set last_usage_report_id = 0, usage_entries_dropped = 0');
  await pool.query('vacuum (analyze) subscriptions, subscription_counters, usage_hourly, nodes');
  await pool.query('checkpoint');
}

/** Counters of one phase: WAL written and how many updates of the subscriptions' counters rows were HOT (no index entries). */
async function walAndHot(pool: pg.Pool) {
  // Table statistics reach pg_stat_user_tables about a second after a transaction.
  await new Promise((r) => setTimeout(r, 1500));
  const r = await pool.query(
    `select pg_current_wal_lsn()::text as lsn, n_tup_upd::text as upd, n_tup_hot_upd::text as hot
       from pg_stat_user_tables where relid = 'subscription_counters'::regclass`,
  );
  const row = r.rows[0] as { lsn: string; upd: string; hot: string };
  return { lsn: row.lsn, upd: Number(row.upd), hot: Number(row.hot) };
}
async function walAndHotSince(pool: pg.Pool, from: Awaited<ReturnType<typeof walAndHot>>, reports: number) {
  const to = await walAndHot(pool);
  const wal = Number((await pool.query('select pg_wal_lsn_diff($1, $2)::text as d', [to.lsn, from.lsn])).rows[0]?.d ?? 0);
  const upd = to.upd - from.upd;
  return { walMiB: wal / reports / 2 ** 20, hot: upd > 0 ? (to.hot - from.hot) / upd : 0, updates: upd };
}

async function sums(pool: pg.Pool) {
  const r = await pool.query(`
    select (select coalesce(sum(used_bytes), 0)::text from subscription_counters) as used,
           (select coalesce(sum(lifetime_used_bytes), 0)::text from subscription_counters) as lifetime,
           (select coalesce(sum(uplink_bytes + downlink_bytes), 0)::text from usage_hourly) as hourly,
           (select count(*)::text from usage_hourly) as hourly_rows,
           (select coalesce(sum(usage_entries_dropped), 0)::text from nodes) as dropped`);
  const row = r.rows[0] as Record<string, string>;
  const ids = await pool.query('select id, last_usage_report_id::text as last from nodes order by id');
  return {
    used: BigInt(row.used as string),
    lifetime: BigInt(row.lifetime as string),
    hourly: BigInt(row.hourly as string),
    hourlyRows: Number(row.hourly_rows),
    dropped: BigInt(row.dropped as string),
    lastIds: new Map(ids.rows.map((x: { id: string; last: string }) => [x.id, Number(x.last)])),
  };
}

/** NODES loops, one per node, each doing `one(k, r)` for reports r = 1, 2, … until the time is up; entries/s after the warm-up. */
async function loops(seconds: number, warmup: number, groups: CpuGroups, one: (k: number, r: number) => Promise<void>) {
  const acks: Ack[] = [];
  const t0 = performance.now();
  const until = t0 + (warmup + seconds) * 1000;
  let c0: CpuReading | undefined;
  let c1: CpuReading | undefined;
  const timers = [
    setTimeout(async () => {
      c0 = await readCpu(groups);
    }, warmup * 1000),
    setTimeout(
      async () => {
        c1 = await readCpu(groups);
      },
      (warmup + seconds) * 1000,
    ),
  ];
  await Promise.all(
    Array.from({ length: NODES }, async (_, k) => {
      for (let r = 1; performance.now() < until; r++) {
        const t = performance.now();
        await one(k, r);
        const now = performance.now();
        acks.push([now - t0, now - t, ENTRIES, 0]);
      }
    }),
  );
  timers.forEach(clearTimeout);
  if (!c0 || !c1) throw new Error('CPU samples missing');
  const window = acks.filter((a) => a[0] >= warmup * 1000 && a[0] <= (warmup + seconds) * 1000);
  return {
    rate: window.reduce((s, a) => s + a[2], 0) / seconds,
    reportsPerS: window.length / seconds,
    p50: pct(
      window.map((a) => a[1]),
      50,
    ),
    p99: pct(
      window.map((a) => a[1]),
      99,
    ),
    reports: acks.length,
    cpu: cpuPercent(c0, c1),
  };
}

await main(async () => {
  const fleet = await setUpFleet({ nodes: NODES, workers: WORKERS, poolSize: NODES + 2 });
  const { loadBefore, database, redis, inst, nodeIds, workers } = fleet;
  const { pool } = database;
  const tSeed = performance.now();
  await seedClients(database.db, CLIENTS);
  await seedSubscriptions(database.db, { count: SUBSCRIPTIONS, clients: CLIENTS, tokenEnc: 'bench' });
  await seedServingPartitions(database.db, { nodes: NODES, subscriptions: SUBSCRIPTIONS });
  const subIds = Array.from({ length: SUBSCRIPTIONS }, (_, i) => subscriptionId(i));
  log(`${n(SUBSCRIPTIONS)} subscriptions seeded in ${((performance.now() - tSeed) / 1000).toFixed(1)} s`);
  const ordinals = workers.map((_, i) => nodeIds.map((_, k) => k).filter((k) => k % workers.length === i));
  if (FILLFACTOR) {
    // Applied to the pages by the VACUUM FULL of every reset.
    await pool.query(`alter table subscription_counters set (fillfactor = ${FILLFACTOR})`);
    await pool.query(`alter table usage_hourly set (fillfactor = ${FILLFACTOR})`);
  }
  await reset(pool);

  // ---- through the gateway
  // SVC_USAGE_* of the bench's environment reach the gateway (fold settings, for experiments).
  const cp = await startControlPlane(
    fleet,
    Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('SVC_USAGE_'))) as Record<string, string>,
  );
  log(`control plane pid ${cp.pid} on ${cp.endpoint}`);
  const opened = await Promise.all(
    workers.map((w, i) => {
      w.send({
        type: 'usage',
        endpoint: cp.endpoint,
        caCertPem: inst.caCertPem,
        keyPem: inst.agent.keyPem,
        subscriptions: SUBSCRIPTIONS,
        entries: ENTRIES,
        nodes: NODES,
        ordinals: ordinals[i],
      });
      return w.next<{ opened: number; failed: number; failures: string[] }>('usage-opened');
    }),
  );
  if (opened.some((o) => o.failed > 0)) throw new Error(`streams not opened: ${opened.flatMap((o) => o.failures).join('; ')}`);
  log(`${NODES} streams open; ${WARMUP} s warm-up, then ${SECONDS} s of usage reports`);

  const workerPids = workers.map((w) => w.proc.pid as number);
  const groups: CpuGroups = { gateway: () => [cp.pid], postgres: () => ourPostgresPids(pool), agents: () => workerPids };
  /**
   * The first `active` nodes send reports for warm-up + `seconds`. An acknowledgement means the
   * report is staged; the gateway's fold credits it after (domain agents/usage-fold.ts). So the
   * measured part ends when the last report acknowledged in it is credited (usage_inbox empty):
   * entries/s = entries acknowledged in the window ÷ (window + the time the fold needed after it
   * to credit what was still staged), CPU over the same span.
   */
  const gatewayRun = async (active: number, seconds: number, warmup: number) => {
    let s0: CpuReading | undefined;
    const tStart = performance.now();
    const windowEnd = tStart + (warmup + seconds) * 1000;
    const staged = async () => Number((await pool.query('select coalesce(sum(entries), 0)::int8 as n from usage_inbox')).rows[0]?.n);
    // The backlog when the window opens and when it closes: what the fold credited within it.
    let b0: number | undefined;
    let b1: number | undefined;
    const timer = setTimeout(async () => {
      s0 = await readCpu(groups);
      b0 = await staged();
    }, warmup * 1000);
    const closing = setTimeout(
      async () => {
        b1 = await staged();
      },
      (warmup + seconds) * 1000,
    );
    const from = await walAndHot(pool);
    // The staged backlog, sampled through the run: how far the fold lags.
    let maxBacklog = 0;
    let maxAgeMs = 0;
    const sampler = setInterval(async () => {
      const b = (
        await pool.query(
          `select coalesce(sum(entries), 0)::int as n, coalesce(extract(epoch from now() - min(received_at)) * 1000, 0)::float8 as age from usage_inbox`,
        )
      ).rows[0] as { n: number; age: number };
      maxBacklog = Math.max(maxBacklog, b.n);
      maxAgeMs = Math.max(maxAgeMs, b.age);
    }, 250);
    const done = await Promise.all(
      workers.map((w) => {
        w.send({ type: 'usage-run', active, seconds, warmupSeconds: warmup, userEveryMs: USER_EVERY_S * 1000 });
        return w.next<{ acks: Ack[]; errors: string[]; lastIds: Array<[string, number]>; buildMs: number }>(
          'usage-done',
          (warmup + seconds + 180) * 1000,
        );
      }),
    );
    clearTimeout(timer);
    clearTimeout(closing);
    // Everything acknowledged credited: the fold has emptied the inbox.
    for (const end = Date.now() + 300_000; ; ) {
      const left = Number((await pool.query('select count(*)::int as n from usage_inbox')).rows[0]?.n);
      if (left === 0) break;
      if (Date.now() > end) throw new Error(`the fold left ${left} staged reports for 300 s`);
      // Every 20 ms this count took ~4% of PostgreSQL from the fold it waits for (pg_stat_statements, 1M run).
      await new Promise((r) => setTimeout(r, 100));
    }
    const drainS = Math.max(0, performance.now() - windowEnd) / 1000;
    const s1 = await readCpu(groups);
    clearInterval(sampler);
    if (!s0) throw new Error('CPU sample missing');
    const span = seconds + drainS;
    const acks = done.flatMap((d) => d.acks);
    const inWindow = acks.filter((a) => a[0] >= warmup * 1000 && a[0] <= (warmup + seconds) * 1000);
    const lat = inWindow.map((a) => a[1]);
    const entriesIn = inWindow.reduce((sum, a) => sum + a[2], 0);
    const wal = await walAndHotSince(pool, from, acks.length);
    if (b0 === undefined || b1 === undefined) throw new Error('backlog sample missing');
    const run = {
      done,
      acks,
      rate: entriesIn / span,
      /** Credited within the window: the backlog at its start, plus what was acknowledged in it, less the backlog at its end. */
      foldRate: (b0 + entriesIn - b1) / seconds,
      backlogStart: b0,
      backlogEnd: b1,
      entriesIn,
      acknowledgedRate: entriesIn / seconds,
      drainS,
      maxBacklog,
      maxAgeMs,
      reportsPerS: inWindow.length / span,
      p50: pct(lat, 50),
      p99: pct(lat, 99),
      cpu: cpuPercent(s0, s1),
      errors: done.flatMap((d) => d.errors),
      wal,
      writesPerEntry: wal.updates / acks.reduce((sum, a) => sum + a[2], 0),
    };
    log(
      `gateway, ${active} nodes: ${n(run.rate)} entries/s credited (within the window ${n(run.foldRate)}/s, backlog ${n(b0)} → ${n(b1)}; ${n(run.acknowledgedRate)}/s acknowledged, the fold ${drainS.toFixed(1)} s behind at the end, backlog at most ${n(maxBacklog)} entries, oldest ${(maxAgeMs / 1000).toFixed(1)} s; ${run.writesPerEntry.toFixed(2)} subscription writes an entry), p50 ${run.p50.toFixed(0)} ms, p99 ${run.p99.toFixed(0)} ms, CPU gateway ${run.cpu.gateway?.toFixed(0)}% PostgreSQL ${run.cpu.postgres?.toFixed(0)}% other ${run.cpu.other?.toFixed(0)}%; errors ${run.errors.length}`,
    );
    return run;
  };
  const gw = await gatewayRun(NODES, SECONDS, WARMUP);
  const { acks, done } = gw;
  const usageErrors = gw.errors;

  // Exactly once: what was acknowledged is what was counted, once.
  const expected = acks.reduce((s, a) => s + BigInt(a[3]), 0n);
  const after = await sums(pool);
  const lastIds = new Map(done.flatMap((d) => d.lastIds));
  const lastIdsMatch = [...lastIds].every(([id, last]) => after.lastIds.get(id) === last);
  const exact = after.used === expected && after.lifetime === expected && after.hourly === expected && after.dropped === 0n && lastIdsMatch;
  const replayed = await Promise.all(
    workers.map((w) => {
      w.send({ type: 'replay' });
      return w.next<{ acked: number; errors: string[] }>('replayed');
    }),
  );
  const replayAcked = replayed.reduce((s, r) => s + r.acked, 0);
  const replayErrors = replayed.flatMap((r) => r.errors);
  const again = await sums(pool);
  const unchanged =
    again.used === after.used &&
    again.lifetime === after.lifetime &&
    again.hourly === after.hourly &&
    [...after.lastIds].every(([id, last]) => again.lastIds.get(id) === last);
  log(
    `exactly once: ${exact ? 'yes' : 'NO'} (expected ${expected}, used ${after.used}, hourly ${after.hourly}); replays acked ${replayAcked}, unchanged: ${unchanged}`,
  );
  const warnings = warningsOf(cp.app);
  // The same through the gateway with fewer nodes at once (shorter runs): how the rate moves with concurrency.
  const sweep: Array<{ nodes: number; run: Awaited<ReturnType<typeof gatewayRun>> }> = [];
  for (const nodes of SWEEP.filter((x) => x > 0 && x < NODES)) {
    await reset(pool);
    sweep.push({ nodes, run: await gatewayRun(nodes, SECONDS, WARMUP) });
  }
  await Promise.all(workers.map((w) => stopWorker(w)));
  await cp.app.stop(15_000);

  // ---- baseline 1: the domain's ingest called in-process, no gRPC (the gateway's pool size).
  await reset(pool);
  const base = benchDatabaseUrl();
  const domainDb = await connectDatabase({ url: base, dataDir: '', schema: database.schema, poolSize: GATEWAY_POOL });
  onCleanup(() => domainDb.destroy());
  const deps = benchDeps(domainDb.db);
  const inProcessFrom = await walAndHot(pool);
  const benchGroups: CpuGroups = { postgres: () => ourPostgresPids(pool), bench: () => [process.pid] };
  const inProcess = await loops(BASELINE_SECONDS, WARMUP, benchGroups, async (k, r) => {
    const c = reportColumns(subIds, NODES, k, r, ENTRIES);
    const entries: UsageDelta[] = c.ids.map((id, i) => ({
      subscription_id: id,
      uplink_bytes: BigInt(c.up[i] as number),
      downlink_bytes: BigInt(c.down[i] as number),
    }));
    const res = await ingestUsageReport(deps, nodeIds[k] as string, { report_id: BigInt(r), entries });
    if (!res.applied || res.accepted !== ENTRIES) throw new Error(`in-process ingest: report ${r} of node ${k} not applied`);
  });
  const inProcessWal = await walAndHotSince(pool, inProcessFrom, inProcess.reports);
  log(`in-process ingestUsageReport: ${n(inProcess.rate)} entries/s`);

  // ---- baseline 2: the bare multi-row upsert of the same rows, through pg.
  await reset(pool);
  const bareClients = await Promise.all(Array.from({ length: NODES }, () => pool.connect()));
  const bareFrom = await walAndHot(pool);
  const bare = await loops(BASELINE_SECONDS, WARMUP, benchGroups, async (k, r) => {
    const c = reportColumns(subIds, NODES, k, r, ENTRIES);
    const client = bareClients[k] as pg.PoolClient;
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    await client.query('begin');
    await client.query(
      `update subscription_counters s set used_bytes = s.used_bytes + v.up + v.down, lifetime_used_bytes = s.lifetime_used_bytes + v.up + v.down
         from unnest($1::text[], $2::int8[], $3::int8[]) as v(id, up, down) where s.subscription_id = v.id`,
      [c.ids, c.up, c.down],
    );
    await client.query(
      `insert into usage_hourly (subscription_id, node_id, hour, uplink_bytes, downlink_bytes)
       select v.id, $4, $5, v.up, v.down from unnest($1::text[], $2::int8[], $3::int8[]) as v(id, up, down)
       on conflict (subscription_id, hour, node_id) do update
          set uplink_bytes = usage_hourly.uplink_bytes + excluded.uplink_bytes,
              downlink_bytes = usage_hourly.downlink_bytes + excluded.downlink_bytes`,
      [c.ids, c.up, c.down, nodeIds[k], hour],
    );
    await client.query('commit');
  });
  for (const c of bareClients) c.release();
  const bareWal = await walAndHotSince(pool, bareFrom, bare.reports);
  log(`bare upsert: ${n(bare.rate)} entries/s`);

  // ---- where the time goes: the domain's statements, one connection, timed one by one.
  await reset(pool);
  const steps = [
    'begin',
    'lock the node row',
    'credit the served subscriptions and upsert usage_hourly (one statement)',
    'update the node',
    'commit',
  ];
  const spent = steps.map(() => 0);
  let unconditionedMs = 0;
  const one = await pool.connect();
  const node = nodeIds[0] as string;
  for (let r = 1; r <= STATEMENT_SAMPLES + 3; r++) {
    const c = reportColumns(subIds, NODES, 0, r, ENTRIES);
    const up = c.up.map(String);
    const down = c.down.map(String);
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    const timed: Array<() => Promise<unknown>> = [
      () => one.query('begin'),
      () =>
        one.query(
          `select last_usage_report_id::text as last, traffic_multiplier::text as multiplier, traffic_period_bytes::text as period,
                  traffic_quota_bytes, traffic_limited_at from nodes where id = $1 for update`,
          [node],
        ),
      // Mirrors the statement of packages/domain/src/agents/usage-credit.ts for a report (its `batch` source) at the default multiplier of 1
      // (charged = raw: no numeric arithmetic; another multiplier adds floor(raw × m) per direction).
      () =>
        one.query(
          `with r as (select * from unnest($1::text[], $2::int8[], $3::int8[]) as r(id, raw_up, raw_down)),
           v as (select r.id, r.raw_up, r.raw_down, r.raw_up as up, r.raw_down as down from r),
           reach as (
             select g.access_group_id from access_group_inbounds g join inbounds i on i.id = g.inbound_id where i.node_id = $4
             union select access_group_id from node_group_grace where node_id = $4 and until > $6),
           served as (
             select v.*, s.client_id, s.renewal, s.status, s.traffic_limit_bytes, s.starts_on_first_use_seconds
               from v join subscriptions s on s.id = v.id
              where exists (select 1 from subscription_access_groups sag
                             where sag.subscription_id = v.id and sag.access_group_id in (select access_group_id from reach))
                 or exists (select 1 from subscription_group_grace sg
                             where sg.subscription_id = v.id and sg.until > $6 and sg.access_group_id in (select access_group_id from reach))),
           credited as (
             update subscription_counters sc set used_bytes = least(sc.used_bytes, $7::int8) + v.up + v.down,
                    period_uplink_bytes = least(sc.period_uplink_bytes, $7::int8) + v.up,
                    period_downlink_bytes = least(sc.period_downlink_bytes, $7::int8) + v.down,
                    lifetime_used_bytes = least(sc.lifetime_used_bytes, $7::int8) + v.up + v.down
               from served v where sc.subscription_id = v.id and sc.subscription_id = any($1::text[])
             returning v.id, v.client_id, v.renewal, v.up, v.down, v.raw_up, v.raw_down, v.status, sc.used_bytes, v.traffic_limit_bytes,
                       v.starts_on_first_use_seconds),
           started as (
             update subscriptions s set expires_at = $6::timestamptz + make_interval(secs => s.starts_on_first_use_seconds),
                    start_by = null, starts_on_first_use_seconds = null
               from credited c
              where s.id = c.id and c.starts_on_first_use_seconds is not null and c.raw_up + c.raw_down > 0
                and s.starts_on_first_use_seconds is not null
             returning s.id),
           hourly as (
             insert into usage_hourly (subscription_id, node_id, hour, uplink_bytes, downlink_bytes, raw_uplink_bytes, raw_downlink_bytes)
             select c.id, $4, $5, c.up, c.down, c.raw_up, c.raw_down from credited c
             on conflict (subscription_id, hour, node_id) do update
                set uplink_bytes = least(usage_hourly.uplink_bytes, $7::int8) + excluded.uplink_bytes,
                    downlink_bytes = least(usage_hourly.downlink_bytes, $7::int8) + excluded.downlink_bytes,
                    raw_uplink_bytes = least(coalesce(usage_hourly.raw_uplink_bytes, usage_hourly.uplink_bytes), $7::int8) + excluded.raw_uplink_bytes,
                    raw_downlink_bytes = least(coalesce(usage_hourly.raw_downlink_bytes, usage_hourly.downlink_bytes), $7::int8) + excluded.raw_downlink_bytes
             returning 1),
           sliced as (
             update traffic_slices t set used_bytes = least(t.used_bytes, $7::int8) + u.raw_up + u.raw_down
               from r u where t.node_id = $4 and t.subscription_id = u.id
             returning t.subscription_id, t.used_bytes * 2 >= t.slice_bytes as half)
           select (select count(*) from r)::int as reported, (select count(*) from credited)::int as accepted, (select count(*) from served)::int as served,
                  (select count(*) from hourly)::int as hourly,
                  (select coalesce(sum(raw_up + raw_down), 0) from credited)::text as raw,
                  (select coalesce(sum(up + down), 0) from credited)::text as charged,
                  (select array_agg(id order by id) from started) as started,
                  (select array_agg(id order by id) from credited
                    where status = 'active' and traffic_limit_bytes is not null and used_bytes >= traffic_limit_bytes) as reached,
                  (select array_agg(subscription_id order by subscription_id) from sliced where half) as half`,
          [c.ids, up, down, node, hour, new Date(), String(COUNTER_CEILING)],
        ),
      () =>
        one.query(
          `update nodes set last_usage_report_id = $2::int8, usage_entries_dropped = usage_entries_dropped + 0, last_seen_at = now(),
                  traffic_raw_bytes = traffic_raw_bytes + $3::int8, traffic_charged_bytes = traffic_charged_bytes + $3::int8,
                  traffic_period_bytes = traffic_period_bytes + $3::int8
            where id = $1`,
          [node, String(r), String(c.bytes)],
        ),
      () => one.query('commit'),
    ];
    // Baseline in the same loop, its own transaction, order alternating per report: the same
    // credit without the "served by this node" condition (issue 12.4), what it costs.
    const unconditioned = async () => {
      await one.query('begin');
      const t = performance.now();
      await one.query(
        `with v as (select * from unnest($1::text[], $2::int8[], $3::int8[]) as v(id, up, down)),
         credited as (
           update subscription_counters sc set used_bytes = sc.used_bytes + v.up + v.down,
                  period_uplink_bytes = sc.period_uplink_bytes + v.up, period_downlink_bytes = sc.period_downlink_bytes + v.down,
                  lifetime_used_bytes = sc.lifetime_used_bytes + v.up + v.down
             from v join subscriptions s on s.id = v.id where sc.subscription_id = v.id
           returning sc.subscription_id as id, v.up, v.down, s.status, sc.used_bytes, s.traffic_limit_bytes),
         hourly as (
           insert into usage_hourly (subscription_id, node_id, hour, uplink_bytes, downlink_bytes)
           select c.id, $4, $5, c.up, c.down from credited c
           on conflict (subscription_id, hour, node_id) do update
              set uplink_bytes = usage_hourly.uplink_bytes + excluded.uplink_bytes,
                  downlink_bytes = usage_hourly.downlink_bytes + excluded.downlink_bytes
           returning 1)
         select (select count(*) from credited)::int as accepted, (select count(*) from hourly)::int as hourly,
                (select array_agg(id order by id) from credited
                  where status = 'active' and traffic_limit_bytes is not null and used_bytes >= traffic_limit_bytes) as reached`,
        [c.ids, up, down, node, hour],
      );
      if (r > 3) unconditionedMs += performance.now() - t;
      await one.query('commit');
    };
    if (r % 2 === 0) await unconditioned();
    for (const [i, q] of timed.entries()) {
      const t = performance.now();
      await q();
      if (r > 3) spent[i] = (spent[i] as number) + performance.now() - t;
    }
    if (r % 2 === 1) await unconditioned();
  }
  one.release();
  const perStatement = spent.map((ms) => ms / STATEMENT_SAMPLES);
  const statementsTotal = perStatement.reduce((a, b) => a + b, 0);

  // ---- the gateway's protobuf decode of one report (what nice-grpc does before the handler runs).
  const c = reportColumns(subIds, NODES, 0, 1, ENTRIES);
  const bytes = AgentMessage.encode({
    usage: {
      reportId: 1n,
      entries: c.ids.map((id, i) => ({
        subscriptionId: id,
        uplinkBytes: BigInt(c.up[i] as number),
        downlinkBytes: BigInt(c.down[i] as number),
      })),
    },
  }).finish();
  for (let i = 0; i < 10; i++) AgentMessage.decode(bytes);
  const td = performance.now();
  for (let i = 0; i < 30; i++) AgentMessage.decode(bytes);
  const decodeMs = (performance.now() - td) / 30;

  const loadAfter = loadNow();
  const f1 = (x: number) => x.toFixed(1);
  const ms = (x: number) => x.toFixed(1);
  const row = (
    label: string,
    r: { p50: number; p99: number; reportsPerS: number; cpu: Record<string, number> },
    rate: string,
    node: number | undefined,
    agents: number | undefined,
    wal: { walMiB: number; hot: number },
  ) =>
    `| ${label} | ${rate} | ${ms(r.p50)} / ${ms(r.p99)} ms | ${f1(node ?? 0)}% / ${f1(r.cpu.postgres ?? 0)}% / ${agents === undefined ? '–' : `${f1(agents)}%`} / ${f1(r.cpu.other ?? 0)}% | ${ms(((r.cpu.postgres ?? 0) / 100 / r.reportsPerS) * 1000)} ms | ${f1(wal.walMiB)} MiB (${n(Math.round((wal.walMiB * 2 ** 20) / ENTRIES))} B an entry) | ${Math.round(wal.hot * 100)}% |`;
  const errors = usageErrors.length + replayErrors.length + warnings.length + sweep.reduce((a, x) => a + x.run.errors.length, 0);
  publish([
    `### ${new Date().toISOString().slice(0, 10)} — usage ingestion, ${n(SUBSCRIPTIONS)} subscriptions, reports of ${n(ENTRIES)} entries, PostgreSQL${redis ? ' + Redis' : ''}${FILLFACTOR ? ` — experiment: fillfactor ${FILLFACTOR} on subscription_counters and usage_hourly (not the schema's)` : ''}`,
    '',
    setting(database.serverVersion, { before: loadBefore, after: loadAfter }) +
      `${NODES} nodes at once (simulated agents in ${workers.length} worker processes, one mTLS Sync stream each), each report acknowledged before the node's next; ` +
      (USER_EVERY_S > 0
        ? `through the gateway paced as agents report: each user once every ${USER_EVERY_S} s (${n(SUBSCRIPTIONS / USER_EVERY_S)} entries/s offered), the baselines as fast as they go; `
        : '') +
      `gateway defaults (database pool ${GATEWAY_POOL}). Every phase: ${BASELINE_SECONDS === SECONDS ? SECONDS : `${SECONDS} (baselines ${BASELINE_SECONDS})`} s measured after a ${WARMUP} s warm-up, from the same state (zeroed counters, no hourly rows, the counters table packed, every row rewritten once and vacuumed, a checkpoint); baselines: the same ${NODES} loops, same rows and bytes.`,
    '',
    '| path | entries/s | per report p50 / p99 | CPU, % of one core: Node process / PostgreSQL / agents / other work | PostgreSQL CPU per report | WAL per report (an entry) | counters updates that were HOT |',
    '|---|---|---|---|---|---|---|',
    row(
      `through the gateway (gRPC over mTLS), ${NODES} nodes at once (target ≥ ${n(TARGET)})`,
      gw,
      `${n(gw.rate)} credited (${n(gw.foldRate)} within the window; ${n(gw.acknowledgedRate)} acknowledged${USER_EVERY_S > 0 ? ` of ${n(SUBSCRIPTIONS / USER_EVERY_S)} offered` : ''}; ${f1(gw.reportsPerS)} reports/s; ${gw.rate >= TARGET ? 'target met' : 'target not met'})`,
      gw.cpu.gateway,
      gw.cpu.agents,
      gw.wal,
    ),
    ...sweep.map(({ nodes, run }) =>
      row(
        `same, ${nodes} node${nodes > 1 ? 's' : ''} at once`,
        run,
        `${n(run.rate)} credited (${n(run.acknowledgedRate)} acknowledged)`,
        run.cpu.gateway,
        run.cpu.agents,
        run.wal,
      ),
    ),
    row(
      `baseline: each report credited in its own transaction, no staging (the domain's ingestUsageReport in-process, no gRPC, pool ${GATEWAY_POOL})`,
      inProcess,
      n(inProcess.rate),
      inProcess.cpu.bench,
      undefined,
      inProcessWal,
    ),
    row(
      'baseline: bare upsert through pg (UPDATE subscription_counters + INSERT … ON CONFLICT DO UPDATE usage_hourly, one transaction per batch)',
      bare,
      n(bare.rate),
      bare.cpu.bench,
      undefined,
      bareWal,
    ),
    '',
    "Node process: the gateway, or the bench process for the baselines. PostgreSQL: our backends (by application_name) and the server's checkpointer, WAL writer and background writer.",
    '',
    '| measure | figure |',
    '|---|---|',
    `| gateway CPU per report, ${NODES} nodes at once | ${ms(((gw.cpu.gateway as number) / 100 / gw.reportsPerS) * 1000)} ms |`,
    `| staged and folded, ${NODES} nodes at once: counters row writes an entry (updates ÷ entries acknowledged) | ${gw.writesPerEntry.toFixed(2)} |`,
    `| the fold behind the acknowledgements: staged backlog at most / oldest staged report at most / still staged at the window's end, credited within | ${n(gw.maxBacklog)} entries / ${(gw.maxAgeMs / 1000).toFixed(1)} s / ${gw.drainS.toFixed(1)} s |`,
    `| credited within the window: staged at its start + acknowledged in it − staged at its end, ÷ its length | (${n(gw.backlogStart)} + ${n(gw.entriesIn)} − ${n(gw.backlogEnd)}) ÷ ${SECONDS} s = ${n(gw.foldRate)} entries/s |`,
    `| of the gateway's: protobuf decode of one report (${n(bytes.length / 1024)} KiB), measured alone | ${ms(decodeMs)} ms |`,
    `| exactly once: Σ used_bytes = Σ lifetime_used_bytes = Σ hourly rows = Σ acknowledged deltas | ${exact ? 'yes' : 'NO'} (${n(Number(expected))} bytes in ${n(acks.length)} reports; ${n(after.hourlyRows)} hourly rows; each node's last id = its last acknowledged) |`,
    `| replays: ${replayAcked} reports re-sent with old ids (each node's last, the one before, the first), all acknowledged | ${unchanged ? 'nothing changed' : 'SUMS CHANGED'} |`,
    `| errors: reports unacknowledged / replays failed / gateway warn+error log lines | ${usageErrors.length} / ${replayErrors.length} / ${warnings.length} |`,
    '',
    `The domain's statements for one report of ${n(ENTRIES)} entries, one connection, no other bench load, mean of ${STATEMENT_SAMPLES}:`,
    '',
    '| statement | ms | share |',
    '|---|---|---|',
    ...steps.map(
      (s, i) => `| ${s} | ${ms(perStatement[i] as number)} | ${Math.round(((perStatement[i] as number) / statementsTotal) * 100)}% |`,
    ),
    `| total (${n(ENTRIES / (statementsTotal / 1000))} entries/s on one connection) | ${ms(statementsTotal)} | |`,
    `| baseline, interleaved with the above: the same credit without the "served by this node" condition | ${ms(unconditionedMs / STATEMENT_SAMPLES)} | |`,
    ...(errors > 0
      ? ['', `Errors: ${[...usageErrors, ...replayErrors, ...sweep.flatMap((x) => x.run.errors), ...warnings].slice(0, 5).join('; ')}`]
      : []),
  ]);
});
