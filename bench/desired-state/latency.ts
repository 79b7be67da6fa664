// Part 2 of `pnpm bench:desired-state`: change -> agent latency for one small node on loopback.
// On PostgreSQL (a fresh schema): one node with three inbounds (vless tcp, trojan ws, vmess ws)
// in one access group and 100 active subscriptions; one simulated agent connected (its own
// process). 200 sequential changes through the admin API (PATCH /api/v1/subscriptions/{id},
// status disabled/active: each changes the node's users), each timed from just before the
// HTTP request until the agent has the DesiredState of the new revision; after 10 unrecorded
// warm-up changes. Baseline in the same run, same process and connection: the round trip of
// a no-op admin request (GET /api/v1/nodes/{id}). Run against the all-in-one process
// (`svc start`) and, when Redis answers, the split pair (admin-api + control-plane).
import { ourPostgresPids, sealedLinkToken } from '../common/database.ts';
import { setUpFleet, signCertificates, startWorker, stopWorker, warnings } from '../common/fleet.ts';
import { type CpuGroups, cpuPercent, readCpu } from '../common/proc.ts';
import { env, loadNow, log, main, n, pct, publish, quietMachine, setting, sleep } from '../common/run.ts';
import { seedClients, seedSubscriptions } from '../common/seed.ts';
import { awaitRevision, desiredRevision, type Mode, ms, openStreams, startStack, subscriptionId, wall } from './common.ts';

const USERS = env('BENCH_LATENCY_USERS', 100);
const CHANGES = env('BENCH_LATENCY_CHANGES', 200);
const WARMUP = env('BENCH_LATENCY_WARMUP', 10);
const PAUSE_MS = env('BENCH_LATENCY_PAUSE_MS', 50);
const TARGET_P50_MS = 50;
const TARGET_P99_MS = 250;
/** Other work on the machine above this (% of one core) during the changes marks the run as disturbed. */
const DISTURBED_PCT = 25;

interface ModeResult {
  label: string;
  load: string;
  change: number[];
  answered: number[];
  after: number[];
  noop: number[];
  skipped: number;
  cpu: Record<string, number>;
  warned: string[];
}

await main(async () => {
  // No workers yet: each mode gets a fresh agent process.
  const fleet = await setUpFleet({ nodes: 1, workers: 0, schemaPrefix: 'bench_desired' });
  const { loadBefore, database, redis, inst } = fleet;
  const [nodeId] = fleet.nodeIds as [string];
  const modes: Mode[] = (process.env.BENCH_LATENCY_MODES ?? 'all-in-one,split')
    .split(',')
    .filter((m): m is Mode => m === 'all-in-one' || (m === 'split' && redis !== undefined));
  const results: ModeResult[] = [];

  for (const [k, mode] of modes.entries()) {
    // A fresh agent process per mode: its certificate replaces the previous one (serial pinning).
    const worker = startWorker(k);
    await signCertificates(fleet, [worker], [[nodeId]]);
    const stack = await startStack(mode, fleet);
    const { api } = stack;
    log(`${stack.label}: API ${api.base}, gateway ${stack.endpoint}`);
    if (k === 0) {
      const profiles = await Promise.all([
        api.post('/api/v1/inbound-profiles', { name: 'small-vless', protocol: 'vless', stream: { network: 'tcp', security: 'none' } }),
        api.post('/api/v1/inbound-profiles', { name: 'small-trojan', protocol: 'trojan', stream: { network: 'ws', security: 'none' } }),
        api.post('/api/v1/inbound-profiles', { name: 'small-vmess', protocol: 'vmess', stream: { network: 'ws', security: 'none' } }),
      ]);
      const inbounds = [];
      for (const [i, p] of profiles.entries())
        inbounds.push(await api.post('/api/v1/inbounds', { node_id: nodeId, profile_id: p.id, port: 1000 + i }));
      const group = await api.post('/api/v1/access-groups', { name: 'small', inbound_ids: inbounds.map((i) => i.id) });
      await seedClients(database.db, 10);
      await seedSubscriptions(database.db, { count: USERS, clients: 10, tokenEnc: sealedLinkToken(inst), groupId: group.id });
    }
    await openStreams([worker], stack.endpoint, inst, 1);

    const load = await quietMachine();
    // Baseline: a no-op admin request on the same API, same client.
    const noop: number[] = [];
    for (let i = 0; i < WARMUP + CHANGES; i++) {
      const t0 = wall();
      await api.get(`/api/v1/nodes/${nodeId}`);
      if (i >= WARMUP) noop.push(wall() - t0);
    }
    const groups: CpuGroups = {
      gateway: () => [stack.gateway.pid],
      admin: () => (stack.admin.pid === stack.gateway.pid ? [] : [stack.admin.pid]),
      postgres: () => ourPostgresPids(database.pool),
      agent: () => [worker.proc.pid as number],
    };
    const change: number[] = [];
    const answered: number[] = [];
    const after: number[] = [];
    let skipped = 0;
    let cpu0 = await readCpu(groups);
    for (let i = 0; i < WARMUP + CHANGES; i++) {
      if (i === WARMUP) cpu0 = await readCpu(groups);
      const t0 = wall();
      await api.patch(`/api/v1/subscriptions/${subscriptionId(1)}`, { status: i % 2 === 0 ? 'disabled' : 'active' });
      const t1 = wall();
      const rev = await desiredRevision(database, nodeId);
      const [arrival] = await awaitRevision([worker], rev, 30_000);
      if (!arrival) throw new Error('no arrival');
      if (i >= WARMUP) {
        change.push(arrival[2] - t0);
        answered.push(t1 - t0);
        after.push(arrival[2] - t1);
        if (arrival[1] !== rev) skipped++;
      }
      await sleep(PAUSE_MS);
    }
    const cpu = cpuPercent(cpu0, await readCpu(groups));
    const warned = [...new Set([stack.gateway.app, stack.admin.app])].flatMap(warnings);
    log(`${mode}: change → agent p50 ${ms(pct(change, 50))} ms, p99 ${ms(pct(change, 99))} ms; no-op GET p50 ${ms(pct(noop, 50))} ms`);
    results.push({ label: stack.label, load, change, answered, after, noop, skipped, cpu, warned });
    await stopWorker(worker);
    await stack.stop();
  }

  const loadAfter = loadNow();
  const lines = [
    `### ${new Date().toISOString().slice(0, 10)} — desired state: change → agent latency, one small node on loopback, PostgreSQL${redis ? ' + Redis' : ''}`,
    '',
    setting(database.serverVersion, { 'at the start': loadBefore, after: loadAfter }) +
      `Node: three inbounds (vless tcp, trojan ws, vmess ws) in one access group, ${n(USERS)} active subscriptions; one simulated agent (its own process). ` +
      `${n(CHANGES)} changes after ${WARMUP} unrecorded: PATCH /api/v1/subscriptions/{id} toggling one subscription disabled/active, one at a time, ${PAUSE_MS} ms apart; ` +
      'each timed from just before the HTTP request until the agent has decoded the DesiredState of the new revision (wall clock shared by the processes). ' +
      `Baseline: ${n(CHANGES)} GET /api/v1/nodes/{id} (a no-op admin request: token check, one read) on the same API and keep-alive connection.`,
    '',
    '| product | load before | change → agent p50 / p99 / max ms (target p50 < 50, p99 < 250) | of which: PATCH answered p50 / p99 | then → agent p50 / p99 | baseline: no-op GET p50 / p99 ms | CPU during the changes, % of one core: gateway / admin API / PostgreSQL / agent / other work |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const c = (k: string) => (r.cpu[k] as number).toFixed(1);
    lines.push(
      `| ${r.label} | ${r.load} | ${ms(pct(r.change, 50))} / ${ms(pct(r.change, 99))} / ${ms(Math.max(...r.change))} | ${ms(pct(r.answered, 50))} / ${ms(pct(r.answered, 99))} | ${ms(pct(r.after, 50))} / ${ms(pct(r.after, 99))} | ${ms(pct(r.noop, 50))} / ${ms(pct(r.noop, 99))} | ${c('gateway')} / ${r.label.startsWith('all-in-one') ? '(same)' : c('admin')} / ${c('postgres')} / ${c('agent')} / ${c('other')} |`,
    );
  }
  lines.push('');
  for (const r of results) {
    const met = pct(r.change, 50) < TARGET_P50_MS && pct(r.change, 99) < TARGET_P99_MS;
    lines.push(
      `- ${r.label.split(' (')[0]}: target ${met ? 'met' : 'not met'}; rounds that got a newer revision than their own: ${r.skipped}; warn+error log lines: ${r.warned.length}${r.warned.length ? ` (${r.warned.slice(0, 2).join('; ')})` : ''}.` +
        ((r.cpu.other as number) > DISTURBED_PCT
          ? ` **Disturbed:** other work on the machine used ${(r.cpu.other as number).toFixed(0)}% of a core during the changes; these figures do not compare with quiet runs.`
          : ''),
    );
  }
  publish(lines);
});
