// Child process of the gateway benchmarks: simulated agents (bench/gateway/agent.ts) for a
// share of the nodes. Driven over IPC by streams.ts or usage.ts:
//   sign    -> signs its nodes' certificates with the CA (signNodeCsr), answers their serials;
//   streams -> opens one Sync stream per node (bounded concurrency), then a StatusReport
//              every period per stream, staggered; `counters` reads what was sent;
//   usage   -> opens the streams; `usage-run` sends UsageReports, each acknowledged before the
//              node's next one; `replay` re-sends old report ids;
//   record  -> from now on, notes when each DesiredState revision and each Command reaches
//              each agent (wall clock, comparable across processes of this machine);
//              `await-revision` / `await-commands` answer once every open agent has it;
//   storm-* -> reconnecting agents for bench/reconnect-storm (storm-worker.ts): storm-open,
//              storm-resume (offer TLS sessions or not), storm-stats;
//   stop    -> closes every stream and exits.
import { certificateFacts, loadCa, signNodeCsr } from '@svc/domain';
import type { UsageEntry } from '@svc/proto';
import { stormOpen, stormResume, stormStats, stormStop } from '../reconnect-storm/storm-worker.ts';
import { BenchAgent, type Identity, lastReceived } from './agent.ts';
import { reportColumns, subscriptionId } from './usage-plan.ts';

const index = Number(process.argv[2] ?? 0);
const send = (m: unknown) => process.send?.(m);
const certs = new Map<string, string>();
let agents: BenchAgent[] = [];
let stopping = false;
const timers: NodeJS.Timeout[] = [];

let statusSent = 0;
let lost = 0;
const lostSample: string[] = [];

async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i] as T, i);
      }
    }),
  );
}

async function sign(m: { caCertPem: string; caKeyPem: string; csrPem: string; nodeIds: string[] }) {
  const t = performance.now();
  const ca = await loadCa({ certPem: m.caCertPem, keyPem: m.caKeyPem });
  const now = new Date();
  const serials: Array<[string, string]> = [];
  await pool(m.nodeIds, 4, async (id) => {
    const pem = await signNodeCsr(ca, m.csrPem, id, now);
    certs.set(id, pem);
    serials.push([id, certificateFacts(pem).serial]);
  });
  // In the order of m.nodeIds, not of completion: agent j is the node of ordinal j (usage.ts),
  // and since a node is credited only for the subscriptions it serves, a mix-up shows as drops.
  const mine = new Set(m.nodeIds);
  const signed = new Map(certs);
  certs.clear();
  for (const [id, pem] of signed) if (!mine.has(id)) certs.set(id, pem);
  for (const id of m.nodeIds) certs.set(id, signed.get(id) as string);
  send({ type: 'signed', serials, ms: performance.now() - t });
}

function makeAgents(endpoint: string, caCertPem: string, keyPem: string): BenchAgent[] {
  const ca = Buffer.from(caCertPem);
  const key = Buffer.from(keyPem);
  return [...certs].map(([id, pem]) => {
    const identity: Identity = { caCertPem: ca, keyPem: key, certPem: Buffer.from(pem) };
    const a = new BenchAgent(endpoint, id, identity);
    a.onEnd = (end) => {
      if (stopping) return;
      lost++;
      if (lostSample.length < 5) lostSample.push(`${id}: ${end.code} ${end.details}`);
    };
    a.onDesiredState = (d) => recording && arrived(id, Number(d.revision));
    a.onCommand = (c) => recording && commandArrived(id, c.commandId);
    return a;
  });
}

/** Opens every stream, `concurrency` at a time; returns per-stream open latencies and failures. */
async function openAll(concurrency: number, onOpen?: (a: BenchAgent) => void) {
  const latencies: number[] = [];
  const failures: string[] = [];
  let opened = 0;
  const progress = setInterval(() => send({ type: 'progress', opened, failed: failures.length }), 1000);
  const t0 = performance.now();
  await pool(agents, concurrency, async (a) => {
    const t = performance.now();
    try {
      await a.open();
      latencies.push(performance.now() - t);
      opened++;
      onOpen?.(a);
    } catch (err) {
      failures.push((err as Error).message);
    }
  });
  clearInterval(progress);
  return { opened, failed: failures.length, failures: failures.slice(0, 5), latencies, ms: performance.now() - t0 };
}

async function streams(m: { endpoint: string; caCertPem: string; keyPem: string; concurrency: number; statusPeriodMs: number }) {
  agents = makeAgents(m.endpoint, m.caCertPem, m.keyPem);
  const r = await openAll(m.concurrency, (a) => {
    // StatusReport every period from a random phase: 10,000 streams spread their reports evenly.
    const first = setTimeout(() => {
      if (a.ended || stopping) return;
      a.sendStatus();
      statusSent++;
      const every = setInterval(() => {
        if (a.ended || stopping) return clearInterval(every);
        a.sendStatus();
        statusSent++;
      }, m.statusPeriodMs);
      timers.push(every);
    }, Math.random() * m.statusPeriodMs);
    timers.push(first);
  });
  send({ type: 'opened', ...r });
}

// ---- usage

interface UsageRun {
  subscriptions: number;
  entries: number;
  /** All nodes of the run, and the ordinal of each of this worker's (which partition of the subscriptions it reports). */
  nodes: number;
  ordinals: number[];
}
let usagePlan: UsageRun | null = null;
let subscriptionIds: string[] = [];
const lastIds: number[] = [];

function report(k: number, r: number): { entries: UsageEntry[]; bytes: number } {
  const plan = usagePlan as UsageRun;
  const c = reportColumns(subscriptionIds, plan.nodes, k, r, plan.entries);
  const entries: UsageEntry[] = c.ids.map((id, i) => ({
    subscriptionId: id,
    uplinkBytes: BigInt(c.up[i] as number),
    downlinkBytes: BigInt(c.down[i] as number),
  }));
  return { entries, bytes: c.bytes };
}

async function usageOpen(m: UsageRun & { endpoint: string; caCertPem: string; keyPem: string }) {
  usagePlan = m;
  subscriptionIds = Array.from({ length: m.subscriptions }, (_, i) => subscriptionId(i));
  agents = makeAgents(m.endpoint, m.caCertPem, m.keyPem);
  const r = await openAll(agents.length, (a) => {
    // A real agent's StatusReport every 30 s keeps the stream alive between usage runs.
    const every = setInterval(() => {
      if (a.ended || stopping) return clearInterval(every);
      a.sendStatus();
    }, 30_000);
    timers.push(every);
  });
  send({ type: 'usage-opened', ...r });
}

/**
 * One run: the nodes with an ordinal below `active` send reports for warm-up + measured seconds.
 * `userEveryMs` 0: each node's next report as soon as the last is acknowledged; above 0, paced
 * as agents report: each of the node's users once every `userEveryMs` (its users in reports of
 * `entries`, spread evenly over that time; a report late on its slot goes at once).
 */
async function usageRun(m: { active: number; seconds: number; warmupSeconds: number; userEveryMs: number }) {
  const plan = usagePlan as UsageRun;
  // Per acknowledged report: [ack time since start (ms), ack latency (ms), entries, bytes].
  const acks: Array<[number, number, number, number]> = [];
  const errors: string[] = [];
  let encodeMs = 0;
  const t0 = performance.now();
  const until = t0 + (m.warmupSeconds + m.seconds) * 1000;
  await Promise.all(
    agents.map(async (a, j) => {
      const k = plan.ordinals[j] as number;
      lastIds[j] = 0;
      if (k >= m.active) return;
      // Reports a node needs to name each of its users once, and the time between two of them when paced.
      const perCycle = Math.ceil(Math.floor(plan.subscriptions / plan.nodes) / plan.entries);
      const slotMs = m.userEveryMs / perCycle;
      for (let r = 1; performance.now() < until; r++) {
        const wait = t0 + (r - 1) * slotMs - performance.now();
        if (wait > 0) await new Promise((res) => setTimeout(res, wait));
        if (performance.now() >= until) break;
        const te = performance.now();
        const { entries, bytes } = report(k, r);
        encodeMs += performance.now() - te;
        const t = performance.now();
        try {
          await a.sendUsage(BigInt(r), entries);
        } catch (err) {
          errors.push((err as Error).message);
          return;
        }
        const now = performance.now();
        acks.push([now - t0, now - t, entries.length, bytes]);
        lastIds[j] = r;
      }
    }),
  );
  send({
    type: 'usage-done',
    acks,
    errors,
    lastIds: agents.flatMap((a, j) => ((plan.ordinals[j] as number) < m.active ? [[a.nodeId, lastIds[j]]] : [])),
    buildMs: encodeMs,
  });
}

/** Sends, per node, its last report again (same id), an older one and report 1: each must be acknowledged and change nothing. */
async function replay() {
  const plan = usagePlan as UsageRun;
  let acked = 0;
  const errors: string[] = [];
  await Promise.all(
    agents.map(async (a, j) => {
      const k = plan.ordinals[j] as number;
      const last = lastIds[j] ?? 0;
      for (const id of new Set([last, last - 1, 1])) {
        if (id < 1) continue;
        try {
          await a.sendUsage(BigInt(id), report(k, id).entries);
          acked++;
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
    }),
  );
  send({ type: 'replayed', acked, errors });
}

// ---- desired states (bench/desired-state)

/** Wall-clock milliseconds with sub-millisecond precision; the same clock in every process of this machine. */
const wall = () => performance.timeOrigin + performance.now();
let recording = false;
/** Per node: revision -> [wall ms at arrival, message bytes, decode ms] (first arrival of each revision). */
const revisions = new Map<string, Map<number, [number, number, number]>>();
/** Per node: command id -> wall ms at arrival. */
const commands = new Map<string, Map<string, number>>();
/** The one wait in progress: the nodes still missing what it waits for. */
let waiting: { kind: 'revision' | 'command'; revision: number; commandPrefix: string; remaining: Set<string>; done: () => void } | null =
  null;

function arrived(node: string, revision: number): void {
  const at = wall();
  let m = revisions.get(node);
  if (!m) {
    m = new Map();
    revisions.set(node, m);
  }
  if (!m.has(revision)) m.set(revision, [at, lastReceived.bytes, lastReceived.decodeMs]);
  if (waiting?.kind === 'revision' && revision >= waiting.revision && waiting.remaining.delete(node) && waiting.remaining.size === 0)
    waiting.done();
}

function commandArrived(node: string, commandId: string): void {
  const at = wall();
  let m = commands.get(node);
  if (!m) {
    m = new Map();
    commands.set(node, m);
  }
  m.set(commandId, at);
  if (
    waiting?.kind === 'command' &&
    commandId === waiting.commandPrefix + node &&
    waiting.remaining.delete(node) &&
    waiting.remaining.size === 0
  )
    waiting.done();
}

/** The first arrival, per node, of a revision at or above `revision`. */
function reached(node: string, revision: number): [number, number, number, number] | undefined {
  let best: [number, number, number, number] | undefined;
  for (const [r, v] of revisions.get(node) ?? []) if (r >= revision && (!best || v[0] < best[0])) best = [r, ...v];
  return best;
}

/** Resolves when every open agent of this worker satisfies `has`, or after timeoutMs with the ones still missing. */
function waitFor(
  kind: 'revision' | 'command',
  revision: number,
  commandPrefix: string,
  has: (node: string) => boolean,
  timeoutMs: number,
): Promise<string[]> {
  const remaining = new Set(agents.filter((a) => !a.ended && !has(a.nodeId)).map((a) => a.nodeId));
  if (remaining.size === 0) return Promise.resolve([]);
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(), timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      waiting = null;
      resolve([...remaining]);
    };
    waiting = { kind, revision, commandPrefix, remaining, done: finish };
  });
}

async function awaitRevision(m: { revision: number; timeoutMs?: number }) {
  const missing = await waitFor('revision', m.revision, '', (node) => reached(node, m.revision) !== undefined, m.timeoutMs ?? 60_000);
  // Per node: [node, revision, wall ms at arrival, message bytes, decode ms].
  const arrivals = agents.flatMap((a) => {
    const r = reached(a.nodeId, m.revision);
    return r ? [[a.nodeId, ...r]] : [];
  });
  send({ type: 'revision', revision: m.revision, arrivals, missing });
}

async function awaitCommands(m: { prefix: string; timeoutMs?: number }) {
  const has = (node: string) => commands.get(node)?.has(m.prefix + node) ?? false;
  const missing = await waitFor('command', 0, m.prefix, has, m.timeoutMs ?? 60_000);
  const arrivals = agents.flatMap((a) => {
    const at = commands.get(a.nodeId)?.get(m.prefix + a.nodeId);
    return at === undefined ? [] : [[a.nodeId, at]];
  });
  send({ type: 'commands', prefix: m.prefix, arrivals, missing });
}

async function stop() {
  stopping = true;
  stormStop();
  for (const t of timers) clearTimeout(t);
  for (const a of agents) a.close();
  // Let the cancellations reach the gateway before the sockets go.
  setTimeout(() => process.exit(0), 500);
}

process.on('message', (m: any) => {
  const run = async () => {
    switch (m?.type) {
      case 'sign':
        return sign(m);
      case 'streams':
        return streams(m);
      case 'counters':
        return send({ type: 'counters', statusSent, lost, lostSample, open: agents.filter((a) => !a.ended).length });
      case 'usage':
        return usageOpen(m);
      case 'usage-run':
        return usageRun(m);
      case 'replay':
        return replay();
      case 'record':
        recording = m.on !== false;
        return send({ type: 'recording', on: recording });
      case 'await-revision':
        return awaitRevision(m);
      case 'await-commands':
        return awaitCommands(m);
      case 'storm-open':
        return send({ type: 'storm-opened', ...(await stormOpen(certs, m)) });
      case 'storm-resume':
        stormResume(m.resume);
        return send({ type: 'storm-resumed' });
      case 'storm-stats':
        return send({ type: 'storm-stats', ...stormStats() });
      case 'stop':
        return stop();
    }
  };
  run().catch((err) => {
    process.stderr.write(`agents worker ${index}: ${(err as Error).stack}\n`);
    process.exit(1);
  });
});
// The benchmark went away: so do we.
process.on('disconnect', () => process.exit(0));
