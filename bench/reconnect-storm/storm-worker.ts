// The reconnect-storm side of an agents worker (bench/gateway/agents-worker.ts, which holds the
// nodes' signed certificates): StormAgents for the worker's nodes, opened once, then left to
// reconnect on their own whenever the gateway goes away, as real agents do.
import { counters, StormAgent } from './storm-agent.ts';

let agents: StormAgent[] = [];
let seen = { full: 0, resumed: 0 };

/** Opens every node's stream, `concurrency` at a time, each until its first DesiredState is applied. */
export async function stormOpen(
  certs: Map<string, string>,
  m: { endpoint: string; caCertPem: string; keyPem: string; concurrency: number },
): Promise<{ opened: number; failed: number; ms: number }> {
  // 2,500 simulated agents in one process, under tsx: each stream the gateway's kill ends builds
  // its error's stack (grpc-js client.js keeps the caller's), and tsx's source maps made that
  // ~3% of the agents' CPU, all in the seconds the gateway restarts. A real agent pays it once.
  process.setSourceMapsEnabled(false);
  const ca = Buffer.from(m.caCertPem);
  const key = Buffer.from(m.keyPem);
  agents = [...certs].map(([id, pem]) => new StormAgent(m.endpoint, id, { caCertPem: ca, keyPem: key, certPem: Buffer.from(pem) }));
  const t0 = performance.now();
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: Math.min(m.concurrency, agents.length) }, async () => {
      while (next < agents.length) {
        const a = agents[next++] as StormAgent;
        const applied = new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), 120_000);
          a.onApplied = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        a.connect();
        if (!(await applied)) failed++;
      }
    }),
  );
  return { opened: agents.length - failed, failed, ms: performance.now() - t0 };
}

/** Whether the agents offer their TLS session on the next connections. */
export function stormResume(resume: boolean): void {
  for (const a of agents) a.resume = resume;
}

/** What the agents did since the last reading (handshakes from their credentials). */
export function stormStats() {
  const total = { full: 0, resumed: 0 };
  for (const a of agents) {
    total.full += a.creds.handshakes.full;
    total.resumed += a.creds.handshakes.resumed;
  }
  const out = {
    ...counters,
    endSample: [...counters.endSample],
    endings: { ...counters.endings },
    full: total.full - seen.full,
    resumed: total.resumed - seen.resumed,
    open: agents.filter((a) => a.open).length,
  };
  seen = total;
  Object.assign(counters, { attempts: 0, ended: 0, pushbacks: 0, refusedOther: 0, endSample: [], endings: {} });
  return out;
}

export function stormStop(): void {
  for (const a of agents) a.stop();
}
