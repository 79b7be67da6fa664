// `pnpm bench:agent-journal`: what the agent's usage journal (apps/agent/src/usage) costs on a
// 100,000-user node (BENCH_USERS), in this process, on the disk of the temporary directory:
// - collect() of a reading of every user (plus 100 chain counters) with 0 %, 10 % and 100 % of
//   the users' counters moved since the last one, each collection's records acknowledged as the
//   agent does after the control plane answers: ms per collect and per ack, bytes written;
//   collects that also compacted the file are timed apart;
// - baselines in the same run: a plain append + fdatasync of the same number of bytes as each
//   collection's frame, and of an ack frame's;
// - open() (replay) of a journal holding the 100,000 baselines and N unacknowledged records of
//   10,000 entries each (what piles up while the control plane is unreachable).
// Appends to bench/BENCHMARKS.md.
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { type CounterReading, UsageJournal } from '../../apps/agent/src/usage/index.ts';
import { env, loadNow, log, machine, main, n, publish, quietMachine, revision, tempDir } from '../common/run.ts';

const USERS = env('BENCH_USERS', 100_000);
const ROUNDS = env('BENCH_ROUNDS', 12);
const PENDING = (process.env.BENCH_PENDING ?? '10,100').split(',').filter(Boolean).map(Number);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const max = (xs: number[]) => Math.max(...xs);
const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1);
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(2);

/** A node's reading: every user's counter (values as the engine would grow them) and 100 chain counters. */
function engineReading(): CounterReading {
  const counters = Array.from({ length: USERS }, (_, i) => ({
    email: `sub_01jd${i.toString(32).padStart(22, '0')}@svc`,
    uplink: 0n,
    downlink: 0n,
  }));
  for (let i = 0; i < 100; i++) counters.push({ email: `chain:ch_${i}:0`, uplink: 0n, downlink: 0n });
  return { instance: '4242:2026-11-24T00:00:00Z', counters };
}

/** Moves the counters of `share` of the users (a different slice each round). */
function traffic(reading: CounterReading, share: number, round: number): void {
  const moving = Math.round(USERS * share);
  for (let k = 0; k < moving; k++) {
    const c = reading.counters[(round * 7919 + k) % USERS];
    if (!c) continue;
    c.uplink += 1_000n + BigInt(k);
    c.downlink += 50_000n + BigInt(k);
  }
}

/** A plain append + fdatasync of `bytes` bytes, the floor under any durable journal write of that size. */
async function plainAppend(file: string, bytes: number): Promise<number> {
  const buf = Buffer.alloc(bytes, 0x61);
  const fh = await open(file, 'a');
  try {
    const t = performance.now();
    await fh.write(buf);
    await fh.datasync();
    return performance.now() - t;
  } finally {
    await fh.close();
  }
}

interface Steady {
  share: number;
  collect: number[];
  compacting: number[];
  ack: number[];
  frameBytes: number[];
  plain: number[];
  plainAck: number[];
  records: number;
}

async function steady(share: number): Promise<Steady> {
  const dir = tempDir('svc-bench-journal-');
  const j = await UsageJournal.open(join(dir, 'usage'));
  const reading = engineReading();
  traffic(reading, 1, 0);
  for (const r of await j.collect(reading)) await j.ack(r.reportId); // first sight of every counter
  const s: Steady = { share, collect: [], compacting: [], ack: [], frameBytes: [], plain: [], plainAck: [], records: 0 };
  for (let round = 1; round <= ROUNDS; round++) {
    traffic(reading, share, round);
    const before = j.stats();
    let t = performance.now();
    const records = await j.collect(reading);
    const took = performance.now() - t;
    const after = j.stats();
    if (after.compactions > before.compactions) s.compacting.push(took);
    else {
      s.collect.push(took);
      const written = after.journalBytes - before.journalBytes;
      s.frameBytes.push(written);
      if (written > 0) s.plain.push(await plainAppend(join(dir, 'plain'), written));
    }
    s.records += records.length;
    for (const r of records) {
      const size = j.stats().journalBytes;
      t = performance.now();
      await j.ack(r.reportId);
      s.ack.push(performance.now() - t);
      s.plainAck.push(await plainAppend(join(dir, 'plain-ack'), Math.max(1, j.stats().journalBytes - size)));
    }
  }
  await j.close();
  return s;
}

async function replay(pending: number): Promise<{ pending: number; fileBytes: number; openMs: number }> {
  const dir = join(tempDir('svc-bench-journal-replay-'), 'usage');
  const j = await UsageJournal.open(dir);
  const reading = engineReading();
  traffic(reading, 1, 0);
  await j.collect(reading);
  for (const r of j.pending()) await j.ack(r.reportId);
  for (let round = 1; round <= pending; round++) {
    traffic(reading, 10_000 / USERS, round);
    await j.collect(reading);
  }
  const fileBytes = j.stats().journalBytes;
  await j.close();
  const t = performance.now();
  const k = await UsageJournal.open(dir);
  const openMs = performance.now() - t;
  if (k.pending().length !== pending) throw new Error(`replayed ${k.pending().length} records, expected ${pending}`);
  await k.close();
  return { pending, fileBytes, openMs };
}

await main(async () => {
  const before = await quietMachine();
  const runs: Steady[] = [];
  for (const share of [0, 0.1, 1]) {
    log(`collect, ${share * 100} % of ${n(USERS)} users moving, ${ROUNDS} rounds`);
    runs.push(await steady(share));
  }
  const replays = [];
  for (const p of PENDING) {
    log(`replay of ${p} pending records`);
    replays.push(await replay(p));
  }
  const row = (s: Steady) => {
    const pct = `${s.share * 100} %`;
    const collect = s.collect.length ? `${ms(median(s.collect))} / ${ms(max(s.collect))}` : '—';
    const compacting = s.compacting.length ? `${ms(median(s.compacting))} (${s.compacting.length}×)` : '—';
    const frame = s.frameBytes.length ? mib(median(s.frameBytes)) : '—';
    const plain = s.plain.length ? ms(median(s.plain)) : '—';
    const ack = s.ack.length ? `${ms(median(s.ack))} / ${ms(median(s.plainAck))}` : '—';
    return `| ${pct} | ${collect} | ${compacting} | ${frame} | ${plain} | ${s.records} | ${ack} |`;
  };
  publish([
    `### ${new Date().toISOString().slice(0, 10)} — agent usage journal, ${n(USERS)} users (+100 chain counters)`,
    '',
    `Machine: ${machine()}. Commit ${revision()}. Load average (1/5/15 min) before: ${before}; after: ${loadNow()}. Temporary directory on the machine's disk; ${ROUNDS} collections per row, each followed by the acks of its records.`,
    '',
    '| counters moved | collect ms, median / max | collect that compacted, ms (count) | frame MiB (median) | baseline: plain append + fdatasync of the same bytes, ms | records | ack ms / baseline: plain append + fdatasync of an ack frame, median |',
    '|---|---|---|---|---|---|---|',
    ...runs.map(row),
    '',
    '| replay: open() of a journal with the baselines and N pending records of 10,000 entries | file MiB | open ms |',
    '|---|---|---|',
    ...replays.map((r) => `| N = ${r.pending} | ${mib(r.fileBytes)} | ${ms(r.openMs)} |`),
    '',
  ]);
});
