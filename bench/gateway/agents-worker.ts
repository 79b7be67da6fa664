// Child process of the gateway benchmarks: simulated agents (bench/gateway/agent.ts) for a
// share of the nodes. Driven over IPC by streams.ts or usage.ts:
//   sign    -> signs its nodes' certificates with the CA (signNodeCsr), answers their serials;
//   streams -> opens one Sync stream per node (bounded concurrency), then a StatusReport
//              every period per stream, staggered; `counters` reads what was sent;
//   usage   -> opens the streams; `usage-run` sends UsageReports, each acknowledged before the
//              node's next one; `replay` re-sends old report ids;
//   stop    -> closes every stream and exits.
import { certificateFacts, loadCa, signNodeCsr } from '@svc/domain';
import type { UsageEntry } from '@svc/proto';
import { BenchAgent, type Identity } from './agent.ts';
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

/** One run: the nodes with an ordinal below `active` send reports for warm-up + measured seconds. */
async function usageRun(m: { active: number; seconds: number; warmupSeconds: number }) {
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
      for (let r = 1; performance.now() < until; r++) {
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

async function stop() {
  stopping = true;
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
