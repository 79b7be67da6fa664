// kill -9 of the agent at random moments loses and doubles no usage. A real process (fixtures/
// crash-agent.ts) collects a fake engine's cumulative counters into the journal, sends pending
// records to a fake control plane (an append-only ledger with the gateway's id rule) and
// acknowledges them, with seeded connection drops before delivery and after the ledger commit
// (the ack lost: what a control plane killed after its commit does to the agent). This test
// keeps raising the engine's counters, SIGKILLs the agent after a seeded random delay, starts
// it again on the same directory, and every few rounds drains the agent and replaces the engine
// by a new instance (counters from 0), as the agent does before a planned engine restart. At the
// end, the ledger's sums per subscription equal the engine's final counters summed over its
// instances, exactly. USAGE_CRASH_SEED replays a run.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineCounters, writeEngine } from './fixtures/fake-engine.ts';
import { FakeLedger } from './fixtures/fake-ledger.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../../../..');
const AGENT = resolve(import.meta.dirname, 'fixtures/crash-agent.ts');
const SEED = Number(process.env.USAGE_CRASH_SEED ?? 20261124);
const ROUNDS = 36;
const NEW_INSTANCE_EVERY = 9;

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let dir: string;
/** The fixture compiled once into one plain ES module: ~40 starts without tsx compiling it each time. */
let compiled: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-usage-crash-'));
  compiled = join(dir, 'crash-agent.mjs');
  await build({
    entryPoints: [AGENT],
    outfile: compiled,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts the agent fixture; resolves once it has replayed its journal and is about to work. */
function startAgent(mode: 'loop' | 'drain', seed: number): { child: ChildProcess; ready: Promise<void>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [compiled, dir, mode, String(seed)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const ready = new Promise<void>((res, rej) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => l === 'ready' && res());
    void exited.then((code) => rej(new Error(`agent (${mode}, seed ${seed}) exited with ${code} before ready:\n${stderr}`)));
  });
  ready.catch(() => undefined); // a drain may exit before its "ready" line is read; whoever awaits `ready` still sees the error
  void exited.then((code) => {
    if (code !== 0 && code !== null) process.stderr.write(`agent (${mode}) exited with ${code}:\n${stderr}\n`);
  });
  return { child, ready, exited };
}

describe('usage journal under kill -9', () => {
  it('kill -9 of the agent at random moments, and lost acks, lose and double nothing: the ledger equals the engine counters', async () => {
    const random = prng(SEED);
    const emails = [
      ...Array.from({ length: 30 }, (_, i) => `sub_${i}@svc`),
      'chain:ch_a:0',
      'chain:ch_a:1',
      'operator@example.com',
      'stray',
    ];
    const engineFile = join(dir, 'engine.json');
    let instance = 1;
    const engine: EngineCounters = { instance: `engine-${instance}`, counters: new Map() };
    /** Per subscription: the final counters of the instances already replaced. */
    const truth = new Map<string, [bigint, bigint]>();
    const addToTruth = () => {
      for (const [email, [up, down]] of engine.counters) {
        if (!email.endsWith('@svc')) continue;
        const id = email.slice(0, -4);
        const t = truth.get(id) ?? [0n, 0n];
        truth.set(id, [t[0] + up, t[1] + down]);
      }
    };
    // Traffic: a few users at a time; a counter appears on its user's first traffic, as in the engine; rarely a jump past 2^53.
    const traffic = () => {
      for (let k = 1 + Math.floor(random() * 4); k > 0; k--) {
        const email = emails[Math.floor(random() * emails.length)] as string;
        const [up, down] = engine.counters.get(email) ?? [0n, 0n];
        const jump = random() < 0.005 ? 2n ** 53n : 0n;
        engine.counters.set(email, [up + jump + BigInt(Math.floor(random() * 100_000)), down + BigInt(Math.floor(random() * 1_000_000))]);
      }
      writeEngine(engineFile, engine);
    };
    traffic();
    let timer = setInterval(traffic, 5);
    const drain = async () => {
      clearInterval(timer);
      const agent = startAgent('drain', 0);
      expect(await agent.exited).toBe(0);
    };

    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const agent = startAgent('loop', SEED + round);
        await agent.ready;
        await new Promise((r) => setTimeout(r, 20 + random() * 280));
        agent.child.kill('SIGKILL');
        expect(await agent.exited).toBe(null);
        if (round % NEW_INSTANCE_EVERY === 0) {
          await drain();
          addToTruth();
          instance++;
          engine.instance = `engine-${instance}`;
          engine.counters = new Map();
          traffic();
          timer = setInterval(traffic, 5);
        }
      }
      await drain();
      addToTruth();
    } finally {
      clearInterval(timer);
    }

    const ledger = FakeLedger.read(join(dir, 'ledger.ndjson'));
    expect(Object.fromEntries(ledger.sums), `seed ${SEED}`).toEqual(Object.fromEntries(truth));
    // The runs did work and the resend path ran: reports applied, stale ones acknowledged without credit.
    expect(ledger.applied).toBeGreaterThan(ROUNDS);
    expect(ledger.dups).toBeGreaterThan(0);
    // Compaction kept the journal bounded across all those restarts.
    expect((await stat(join(dir, 'state', 'usage.journal'))).size).toBeLessThan(64 * 1024);
  }, 120_000);
});
