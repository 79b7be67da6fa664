// Part 3 of `pnpm bench:desired-state`: fan-out of one access-group change to 1,000 connected
// nodes. On PostgreSQL (a fresh schema): 1,000 nodes seeded as enrollment leaves them (client
// certificates signed, serials pinned), one vless inbound each (SQL), all in one access group
// (admin API), 5 subscriptions in the group (admin API); 1,000 simulated agents in 2 worker
// processes, one mTLS Sync stream each. Each round makes ONE admin change, POST
// /api/v1/subscriptions into that group (every node gains a user: 1,000 revisions bumped in
// one transaction, one nodes.changed message), and measures from just before the request
// until the last of the 1,000 agents has decoded the new revision (wall clock, stamped by the
// agents' processes). Baselines in the same run: the same 1,000 agents receiving a broadcast
// that does not touch the database (one agent command per node, restart_xray, published on
// the Redis bus the way the admin API does, delivered by the gateway to each stream), and the
// 1,000 nodes' configs compiled in-process: with compileDesiredStates in snapshots of 250 nodes
// (what the gateway does since 8c54a4d), and with compileDesiredState per node, one after the
// other and 10 at a time (the gateway's pool; what it did before).
import { createSharedState } from '@svc/bus';
import { compileDesiredState, compileDesiredStates } from '@svc/desired-state';
import { type AgentCommandRequest, replyTopic, TOPICS } from '@svc/domain';
import { sql } from 'kysely';
import { benchDeps, ourPostgresPids } from '../common/database.ts';
import { REDIS_PREFIX, setUpFleet, stopWorker, warnings } from '../common/fleet.ts';
import { type CpuGroups, type CpuReading, cpuPercent, readCpu } from '../common/proc.ts';
import { env, loadNow, log, main, n, onCleanup, pct, publish, quietMachine, setting, sleep } from '../common/run.ts';
import { seedClients } from '../common/seed.ts';
import {
  awaitCommands,
  awaitRevision,
  desiredRevision,
  ms,
  openStreams,
  ProfileWindows,
  startStack,
  wall,
  writeCpuProfile,
} from './common.ts';

const NODES = env('BENCH_FANOUT_NODES', 1_000);
const WORKERS = env('BENCH_FANOUT_WORKERS', 2);
const SUBSCRIPTIONS = env('BENCH_FANOUT_SUBSCRIPTIONS', 5);
const ROUNDS = env('BENCH_FANOUT_ROUNDS', 6);
const PAUSE_MS = env('BENCH_FANOUT_PAUSE_MS', 3000);
/** Control-plane processes (split mode over Redis); agents spread over them as a TCP load balancer would. */
const REPLICAS = env('BENCH_FANOUT_REPLICAS', 1);
/** Issue 5: 1,000 nodes within 2 s; issue 17: 10,000 nodes within 5 s (two replicas). */
const TARGET_MS = NODES > 1000 ? 5000 : 2000;
/** Other work on the machine above this (% of one core) during a round marks it as disturbed. */
const DISTURBED_PCT = 25;

interface Round {
  last: number;
  first: number;
  p50: number;
  p99: number;
  answered?: number;
  cpu: Record<string, number>;
  cpuSeconds: Record<string, number>;
  skipped: number;
}

function summarize(t0: number, ats: number[], cpu0: CpuReading, cpu1: CpuReading): Round {
  const lat = ats.map((at) => at - t0);
  const cpu = cpuPercent(cpu0, cpu1);
  const seconds = (cpu1.at - cpu0.at) / 1000;
  const cpuSeconds = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, (v / 100) * seconds]));
  return { last: Math.max(...lat), first: Math.min(...lat), p50: pct(lat, 50), p99: pct(lat, 99), cpu, cpuSeconds, skipped: 0 };
}

await main(async () => {
  const fleet = await setUpFleet({ nodes: NODES, workers: WORKERS, schemaPrefix: 'bench_desired' });
  const { loadBefore, database, redis, inst, nodeIds: ids, workers } = fleet;
  const stack = await startStack(redis ? 'split' : 'all-in-one', fleet, { replicas: REPLICAS });
  const gatewayPids = stack.gateways.map((g) => g.pid);
  const { api } = stack;
  log(`${stack.label}: API ${api.base}, gateway ${stack.endpoint}`);

  // One inbound per node (SQL), one group holding them all and a few subscriptions (admin API).
  const profile = await api.post('/api/v1/inbound-profiles', {
    name: 'fleet-vless',
    protocol: 'vless',
    stream: { network: 'tcp', security: 'none' },
  });
  const now = new Date();
  await sql`
    insert into inbounds (id, node_id, profile_id, tag, port, created_at, updated_at)
    select 'inb_' || lpad(i::text, 26, '0'), 'nod_' || lpad(i::text, 26, '0'), ${profile.id}, 'vless-443', 443, ${now}, ${now}
    from generate_series(1, ${NODES}) as i`.execute(database.db);
  const inboundIds = ids.map((_, i) => `inb_${String(i + 1).padStart(26, '0')}`);
  let group: { id: string };
  if (NODES <= 1000) group = await api.post('/api/v1/access-groups', { name: 'fleet', inbound_ids: inboundIds });
  else {
    group = await api.post('/api/v1/access-groups', { name: 'fleet', inbound_ids: [] });
    await sql`insert into access_group_inbounds (access_group_id, inbound_id) select ${group.id}, unnest(${inboundIds}::text[])`.execute(
      database.db,
    );
  }
  await seedClients(database.db, 10);
  const client = (i: number) => `cli_${String(1 + (i % 10)).padStart(26, '0')}`;
  for (let i = 0; i < SUBSCRIPTIONS; i++) await api.post('/api/v1/subscriptions', { client_id: client(i), access_group_ids: [group.id] });
  await sql`analyze`.execute(database.db);
  const spread = (
    await sql<{ lo: string; hi: string }>`select min(desired_revision) as lo, max(desired_revision) as hi from nodes`.execute(database.db)
  ).rows[0];
  if (spread?.lo !== spread?.hi) throw new Error(`nodes at different revisions: ${spread?.lo}..${spread?.hi}`);

  // Baseline: the 1,000 configs compiled in-process (same rows), one after the other, then 10 at a time.
  const deps = benchDeps(database.db, inst.secrets);
  await compileDesiredState(deps, ids[0] as string);
  let t = performance.now();
  for (const id of ids) await compileDesiredState(deps, id);
  const compileSequential = performance.now() - t;
  t = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < ids.length) await compileDesiredState(deps, ids[next++] as string);
    }),
  );
  const compileParallel = performance.now() - t;
  t = performance.now();
  let compiled = 0;
  for (let i = 0; i < ids.length; i += 250)
    await compileDesiredStates(deps, ids.slice(i, i + 250), () => {
      compiled++;
    });
  const compileBatched = performance.now() - t;
  if (compiled !== ids.length) throw new Error(`batched compile gave ${compiled} of ${ids.length} nodes`);
  log(
    `in-process compile of ${n(NODES)} nodes: ${ms(compileSequential)} ms one by one, ${ms(compileParallel)} ms 10 at a time, ${ms(compileBatched)} ms in snapshots of 250`,
  );

  // Connect the fleet: every agent admitted with its first DesiredState.
  const tOpen = performance.now();
  const opened = await openStreams(workers, stack.endpoints, inst, 50);
  const openSeconds = (performance.now() - tOpen) / 1000;
  const openLat = opened.flatMap((o) => o.latencies);
  log(`${n(openLat.length)} streams open in ${openSeconds.toFixed(1)} s`);
  await sleep(5000);

  const loadRounds = await quietMachine();
  const workerPids = workers.map((w) => w.proc.pid as number);
  const groups: CpuGroups = {
    gateway: () => gatewayPids,
    admin: () => (gatewayPids.includes(stack.admin.pid) ? [] : [stack.admin.pid]),
    postgres: () => ourPostgresPids(database.pool),
    agents: () => workerPids,
  };

  // The change, ROUNDS times.
  const rounds: Round[] = [];
  const perNode: number[] = [];
  const windows = new ProfileWindows();
  for (let r = 0; r < ROUNDS; r++) {
    const cpu0 = await readCpu(groups);
    windows.start();
    const t0 = wall();
    await api.post('/api/v1/subscriptions', { client_id: client(r), access_group_ids: [group.id] });
    const answered = wall() - t0;
    const rev = await desiredRevision(database, ids[0] as string);
    const arrivals = await awaitRevision(workers, rev, 120_000);
    const cpu1 = await readCpu(groups);
    if (arrivals.length !== NODES) throw new Error(`${arrivals.length} arrivals for ${NODES} nodes`);
    const round = {
      ...summarize(
        t0,
        arrivals.map((a) => a[2]),
        cpu0,
        cpu1,
      ),
      answered,
      skipped: arrivals.filter((a) => a[1] !== rev).length,
    };
    rounds.push(round);
    perNode.push(...arrivals.map((a) => a[2] - t0));
    windows.end();
    log(
      `round ${r + 1}/${ROUNDS}: revision ${rev} on all ${n(NODES)} agents after ${ms(round.last)} ms (first ${ms(round.first)}, p50 ${ms(round.p50)}; POST answered after ${ms(answered)} ms)`,
    );
    await sleep(PAUSE_MS);
  }

  for (const g of stack.gateways) await writeCpuProfile(g);
  windows.save();

  // Baseline: a broadcast that does not touch the database, one agent command per node over the bus.
  const broadcasts: Round[] = [];
  if (redis) {
    const shared = await createSharedState({ redisUrl: redis, keyPrefix: REDIS_PREFIX });
    onCleanup(() => shared.close());
    for (let r = 0; r < ROUNDS; r++) {
      const prefix = `bench-${r}-`;
      const cpu0 = await readCpu(groups);
      const t0 = wall();
      await Promise.all(
        ids.map((id) => {
          const req: AgentCommandRequest = {
            node_id: id,
            command_id: prefix + id,
            command: { kind: 'restart_xray' },
            reply_to: replyTopic(prefix + id),
          };
          return shared.bus.publish(TOPICS.agentCommands, req);
        }),
      );
      const arrivals = await awaitCommands(workers, prefix, 60_000);
      const cpu1 = await readCpu(groups);
      broadcasts.push(
        summarize(
          t0,
          arrivals.map((a) => a[1]),
          cpu0,
          cpu1,
        ),
      );
      log(`broadcast ${r + 1}/${ROUNDS}: all ${n(NODES)} agents have their command after ${ms(broadcasts.at(-1)?.last as number)} ms`);
      await sleep(1000);
    }
  }

  const warned = [...new Set([...stack.gateways.map((g) => g.app), stack.admin.app])].flatMap(warnings);
  const loadAfter = loadNow();
  await Promise.all(workers.map((w) => stopWorker(w)));
  await stack.stop();

  const lasts = rounds.map((r) => r.last);
  const met = Math.max(...lasts) < TARGET_MS;
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const cpuCell = (r: Round) => {
    const c = (k: string) => ms((r.cpuSeconds[k] as number) * 1000);
    return `${c('gateway')} / ${gatewayPids.includes(stack.admin.pid) ? '(same)' : c('admin')} / ${c('postgres')} / ${c('agents')} / ${c('other')}`;
  };
  const lines = [
    `### ${new Date().toISOString().slice(0, 10)} — desired state: fan-out of one access-group change to ${n(NODES)} connected nodes, PostgreSQL${redis ? ' + Redis' : ''}`,
    '',
    setting(database.serverVersion, { 'at the start': loadBefore, 'before the rounds': loadRounds, after: loadAfter }) +
      `Product: ${stack.label}, defaults (database pool 10 per process). ${n(NODES)} nodes, one vless inbound each, all in one access group with ${SUBSCRIPTIONS} subscriptions at the start; ` +
      `${n(NODES)} simulated agents in ${workers.length} worker processes (one mTLS stream each; connected in ${openSeconds.toFixed(1)} s, per stream p50 ${ms(pct(openLat, 50))} ms). ` +
      `Change: POST /api/v1/subscriptions into the group (every node gains a user: ${n(NODES)} revisions bumped in one transaction, one nodes.changed message), ${ROUNDS} rounds, ${PAUSE_MS / 1000} s apart; ` +
      'timed from just before the request until each agent has decoded the new revision (wall clock stamped in the agents’ processes).',
    '',
    `| round | last of ${n(NODES)} agents (target < ${n(TARGET_MS)} ms) | first agent | per-node p50 / p99 | POST answered | CPU from the request to the last agent, ms: gateway${REPLICAS > 1 ? ` (${REPLICAS} replicas)` : ''} / admin API / PostgreSQL / agents / other work |`,
    '|---|---|---|---|---|---|',
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${ms(r.last)} ms | ${ms(r.first)} ms | ${ms(r.p50)} / ${ms(r.p99)} ms | ${ms(r.answered as number)} ms | ${cpuCell(r)} |`,
    ),
    `| all rounds | p50 ${ms(pct(lasts, 50))}, max ${ms(Math.max(...lasts))} ms | | per-node p50 ${ms(pct(perNode, 50))} ms, p99 ${ms(pct(perNode, 99))} ms | | gateway CPU per node pushed: ${ms((mean(rounds.map((r) => r.cpuSeconds.gateway as number)) * 1e6) / NODES)} µs |`,
    '',
    '| baseline | figure |',
    '|---|---|',
    ...(broadcasts.length
      ? [
          `| broadcast without the database: ${n(NODES)} agent commands (restart_xray) published on the Redis bus, delivered by the gateway to each stream; last agent, per round | ${broadcasts.map((b) => ms(b.last)).join(', ')} ms (per-node p50 ${ms(mean(broadcasts.map((b) => b.p50)))} ms; gateway CPU ${ms(mean(broadcasts.map((b) => (b.cpuSeconds.gateway as number) * 1000)))} ms per broadcast) |`,
        ]
      : []),
    `| compileDesiredStates of the ${n(NODES)} nodes in the bench process (same rows), in snapshots of 250 nodes (the gateway's way) | ${ms(compileBatched)} ms (${ms((compileBatched * 1000) / NODES)} µs per node) |`,
    `| before 8c54a4d: compileDesiredState per node (one snapshot each), one after the other | ${ms(compileSequential)} ms (${ms(compileSequential / NODES)} ms per node) |`,
    `| the same, 10 at a time (the gateway's database pool) | ${ms(compileParallel)} ms |`,
    '',
    `${met ? 'Target met' : 'Target not met'}: the slowest round reached all ${n(NODES)} agents in ${ms(Math.max(...lasts))} ms (target < ${n(TARGET_MS)} ms). ` +
      `Agents that got a newer revision than their round's: ${rounds.reduce((s, r) => s + r.skipped, 0)}; warn+error log lines: ${warned.length}${warned.length ? ` (${warned.slice(0, 2).join('; ')})` : ''}.`,
  ];
  const disturbed = rounds.map((r, i) => [i + 1, (r.cpu.other as number) ?? 0] as const).filter(([, o]) => o > DISTURBED_PCT);
  if (disturbed.length)
    lines.push(
      '',
      `**Disturbed:** other work on the machine used more than ${DISTURBED_PCT}% of a core during round(s) ${disturbed.map(([i, o]) => `${i} (${o.toFixed(0)}%)`).join(', ')}; those do not compare with quiet runs.`,
    );
  publish(lines);
});
