// The journal's rules, each on real files in a temporary directory: what a collection reports,
// what it never reports, how records are acknowledged, how ids rise, and what survives a reopen,
// a torn write and a compaction.
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CounterReading, type JournalRecord, UsageJournal } from '../../src/usage/index.ts';

let dir: string;
const open: UsageJournal[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-usage-journal-'));
});
afterEach(async () => {
  for (const j of open.splice(0)) await j.close().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

async function journal(opts?: Parameters<typeof UsageJournal.open>[1]): Promise<UsageJournal> {
  const j = await UsageJournal.open(dir, opts);
  open.push(j);
  return j;
}

/** A reading of instance `instance`: `[email, uplink, downlink]` triples. */
const reading = (instance: string, ...counters: Array<[string, number | bigint, number | bigint]>): CounterReading => ({
  instance,
  counters: counters.map(([email, up, down]) => ({ email, uplink: BigInt(up), downlink: BigInt(down) })),
});

/** Entries of records as `{ subscription: [up, down] }`, summed. */
function totals(records: JournalRecord[]): Record<string, [bigint, bigint]> {
  const out: Record<string, [bigint, bigint]> = {};
  for (const r of records) {
    for (const e of r.entries) {
      const t = out[e.subscriptionId] ?? [0n, 0n];
      out[e.subscriptionId] = [t[0] + e.uplink, t[1] + e.downlink];
    }
  }
  return out;
}

describe('usage journal', () => {
  it('reports the delta of each counter since the last collection of the same engine instance', async () => {
    const j = await journal();
    expect(totals(await j.collect(reading('e1', ['a@svc', 100, 1000], ['b@svc', 5, 0])))).toEqual({ a: [100n, 1000n], b: [5n, 0n] });
    expect(totals(await j.collect(reading('e1', ['a@svc', 150, 1000], ['b@svc', 5, 7])))).toEqual({ a: [50n, 0n], b: [0n, 7n] });
  });

  it('a collection where no counter moved writes nothing and returns no record', async () => {
    const j = await journal();
    await j.collect(reading('e1', ['a@svc', 1, 2]));
    const size = j.stats().journalBytes;
    expect(await j.collect(reading('e1', ['a@svc', 1, 2], ['zero@svc', 0, 0]))).toEqual([]);
    expect(j.stats().journalBytes).toBe(size);
  });

  it('chain counters are never reported, only counted', async () => {
    const j = await journal();
    const records = await j.collect(reading('e1', ['chain:ch_1:0', 500, 500], ['chain:ch_1:1', 9, 9], ['a@svc', 1, 1]));
    expect(totals(records)).toEqual({ a: [1n, 1n] });
    expect(j.stats().lastReading.chainCounters).toBe(2);
    expect(totals(await j.collect(reading('e1', ['chain:ch_1:0', 900, 900], ['a@svc', 1, 1])))).toEqual({});
  });

  it('emails of any other shape than <subscription_id>@svc are ignored and counted', async () => {
    const j = await journal();
    const records = await j.collect(
      reading('e1', ['admin@example.com', 7, 7], ['@svc', 7, 7], ['x@y@svc', 7, 7], ['chain:broken', 7, 7], ['a@svc', 1, 0]),
    );
    expect(totals(records)).toEqual({ a: [1n, 0n] });
    expect(j.stats().lastReading).toEqual({ chainCounters: 0, ignoredCounters: 4 });
  });

  it('an email repeated within one reading counts once', async () => {
    const j = await journal();
    expect(totals(await j.collect(reading('e1', ['a@svc', 10, 10], ['a@svc', 10, 10])))).toEqual({ a: [10n, 10n] });
    expect(totals(await j.collect(reading('e1', ['a@svc', 15, 10], ['a@svc', 15, 10])))).toEqual({ a: [5n, 0n] });
    expect(j.stats().lastReading.ignoredCounters).toBe(1);
  });

  it('ack clears exactly that record, durably; unknown and repeated acks change nothing', async () => {
    const j = await journal();
    const [r1] = await j.collect(reading('e1', ['a@svc', 1, 0]));
    const [r2] = await j.collect(reading('e1', ['a@svc', 2, 0]));
    const [r3] = await j.collect(reading('e1', ['a@svc', 3, 0]));
    await j.ack(r2!.reportId);
    await j.ack(r2!.reportId);
    await j.ack(12345n);
    expect(j.pending().map((r) => r.reportId)).toEqual([r1!.reportId, r3!.reportId]);
    await j.close();
    const reopened = await journal();
    expect(reopened.pending().map((r) => r.reportId)).toEqual([r1!.reportId, r3!.reportId]);
  });

  it('pending lists the unacknowledged records in ascending report id, across a reopen', async () => {
    const j = await journal({ maxEntriesPerRecord: 2 });
    for (let i = 1; i <= 5; i++) await j.collect(reading('e1', ['a@svc', i, 0], ['b@svc', i, 0], ['c@svc', i, 0]));
    const ids = j.pending().map((r) => r.reportId);
    expect(ids).toHaveLength(10);
    expect(ids).toEqual([...ids].sort((x, y) => (x < y ? -1 : 1)));
    await j.close();
    expect((await journal()).pending().map((r) => r.reportId)).toEqual(ids);
  });

  it('report ids start at or above Date.now() × 1000 on a fresh directory and rise strictly across reopens', async () => {
    const before = BigInt(Date.now()) * 1000n;
    const j = await journal();
    const [first] = await j.collect(reading('e1', ['a@svc', 1, 0]));
    expect(first!.reportId >= before).toBe(true);
    await j.ack(first!.reportId);
    await j.close();
    // Acknowledged, then the clock goes back an hour: the next id still follows the last one.
    const k = await journal({ clock: () => Date.now() - 3_600_000 });
    const [second] = await k.collect(reading('e1', ['a@svc', 2, 0]));
    expect(second!.reportId).toBe(first!.reportId + 1n);
  });

  it('a wiped state directory still issues ids above every earlier one (Date.now() × 1000 floor)', async () => {
    const j = await journal();
    const [old] = await j.collect(reading('e1', ['a@svc', 1, 0]));
    await j.close();
    open.length = 0;
    await rm(dir, { recursive: true });
    await new Promise((r) => setTimeout(r, 2));
    const fresh = await journal();
    const [next] = await fresh.collect(reading('e1', ['a@svc', 1, 0]));
    expect(next!.reportId > old!.reportId).toBe(true);
  });

  it('a torn last write (crash mid-append) is dropped on replay and the journal keeps working after it', async () => {
    const j = await journal();
    await j.collect(reading('e1', ['a@svc', 10, 0]));
    await j.close();
    const file = join(dir, 'usage.journal');
    const whole = (await stat(file)).size;
    // The start of a frame that promises 1,000 bytes of payload and carries 3.
    await appendFile(file, Buffer.from([0xe8, 0x03, 0, 0, 1, 2, 3, 4, 0x7b, 0x22, 0x74]));
    const k = await journal();
    expect(k.stats().droppedTailBytes).toBe(11);
    expect((await stat(file)).size).toBe(whole);
    expect(totals(await k.collect(reading('e1', ['a@svc', 15, 0])))).toEqual({ a: [5n, 0n] });
    await k.close();
    expect(totals((await journal()).pending())).toEqual({ a: [15n, 0n] });
  });

  it('a last frame whose checksum does not match is dropped on replay', async () => {
    const j = await journal();
    await j.collect(reading('e1', ['a@svc', 10, 0]));
    const size = j.stats().journalBytes;
    await j.collect(reading('e1', ['a@svc', 20, 0]));
    await j.close();
    const file = join(dir, 'usage.journal');
    const bytes = await readFile(file);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 2) ^ 0xff, bytes.length - 2);
    await writeFile(file, bytes);
    const k = await journal();
    expect(k.stats().droppedTailBytes).toBe(bytes.length - size);
    // The torn collection never happened: its bytes are still in the counters and the next collection finds them.
    expect(totals(await k.collect(reading('e1', ['a@svc', 20, 0])))).toEqual({ a: [10n, 0n] });
  });

  it('compaction keeps the baselines, the pending records and the highest id, and shrinks the file', async () => {
    // A clock stuck in the past: ids follow the last one, so the test can tell the highest id survived.
    const opts = { compactAfterBytes: 4096, clock: () => 1 };
    const j = await journal(opts);
    for (let i = 1; i <= 60; i++) {
      const records = await j.collect(reading('e1', ['a@svc', i * 10, 0], ['b@svc', i, i]));
      if (i <= 55) for (const r of records) await j.ack(r.reportId);
    }
    expect(j.stats().compactions).toBeGreaterThan(0);
    expect(j.stats().journalBytes).toBeLessThanOrEqual(4096);
    const pending = j.pending();
    expect(totals(pending)).toEqual({ a: [50n, 0n], b: [5n, 5n] });
    await j.close();
    const k = await journal(opts);
    expect(k.pending()).toEqual(pending);
    expect(totals(await k.collect(reading('e1', ['a@svc', 601, 0], ['b@svc', 60, 61])))).toEqual({ a: [1n, 0n], b: [0n, 1n] });
    // Everything acknowledged, then compacted again: the file keeps no record, but the next id still follows the last.
    let last = 0n;
    for (let i = 0; k.stats().compactions < 2; i++) {
      for (const r of k.pending()) await k.ack(r.reportId);
      last = (await k.collect(reading('e1', ['a@svc', 602 + i, 0], ['b@svc', 60, 61])))[0]!.reportId;
    }
    for (const r of k.pending()) await k.ack(r.reportId);
    await k.close();
    const m = await journal(opts);
    expect(m.pending()).toEqual([]);
    expect((await m.collect(reading('e1', ['a@svc', 10_000, 0], ['b@svc', 60, 61])))[0]!.reportId).toBe(last + 1n);
  });

  it('a compaction that crashed before its rename leaves the old journal, and its copy is discarded', async () => {
    const j = await journal();
    await j.collect(reading('e1', ['a@svc', 10, 0]));
    await j.close();
    await appendFile(join(dir, 'usage.journal.compacting'), 'half a snapshot');
    const k = await journal();
    expect(totals(k.pending())).toEqual({ a: [10n, 0n] });
    await expect(stat(join(dir, 'usage.journal.compacting'))).rejects.toThrow(/ENOENT/);
  });

  it('a new engine instance starts every counter from baseline 0', async () => {
    const j = await journal();
    await j.collect(reading('e1', ['a@svc', 1000, 1000], ['b@svc', 50, 50]));
    expect(totals(await j.collect(reading('e2', ['a@svc', 30, 40])))).toEqual({ a: [30n, 40n] });
    expect(j.stats().trackedCounters).toBe(1);
    // And the old instance's baselines are gone after a reopen too.
    await j.close();
    const k = await journal();
    expect(totals(await k.collect(reading('e2', ['a@svc', 31, 40], ['b@svc', 2, 2])))).toEqual({ a: [1n, 0n], b: [2n, 2n] });
  });

  it('a counter that went down within one instance counts its current value from 0', async () => {
    const j = await journal();
    await j.collect(reading('e1', ['a@svc', 1000, 500]));
    expect(totals(await j.collect(reading('e1', ['a@svc', 30, 600])))).toEqual({ a: [30n, 100n] });
    expect(totals(await j.collect(reading('e1', ['a@svc', 35, 600])))).toEqual({ a: [5n, 0n] });
  });

  it('a counter missing from a reading keeps its baseline: when it comes back, only its growth is reported', async () => {
    const j = await journal();
    await j.collect(reading('e1', ['a@svc', 10, 0], ['b@svc', 10, 0]));
    await j.collect(reading('e1', ['a@svc', 10, 0]));
    expect(j.stats().trackedCounters).toBe(2);
    await j.close();
    const k = await journal();
    expect(totals(await k.collect(reading('e1', ['a@svc', 10, 0], ['b@svc', 13, 0])))).toEqual({ b: [3n, 0n] });
  });

  it('one collection is split into records of at most maxEntriesPerRecord entries, ids consecutive', async () => {
    const j = await journal({ maxEntriesPerRecord: 3 });
    const counters = Array.from({ length: 8 }, (_, i) => [`s${i}@svc`, i + 1, 0] as [string, number, number]);
    const records = await j.collect(reading('e1', ...counters));
    expect(records.map((r) => r.entries.length)).toEqual([3, 3, 2]);
    expect(records.map((r) => r.reportId - records[0]!.reportId)).toEqual([0n, 1n, 2n]);
    expect(Object.keys(totals(records))).toHaveLength(8);
  });

  it('counters above 2^53 are exact through the file', async () => {
    const big = 2n ** 62n + 3n;
    const j = await journal();
    await j.collect(reading('e1', ['a@svc', big, big - 1n]));
    await j.collect(reading('e1', ['a@svc', big + 2n, big]));
    await j.close();
    expect(totals((await journal()).pending())).toEqual({ a: [big + 2n, big] });
  });

  it('stats count the pending records, entries and bytes', async () => {
    const j = await journal();
    const [r] = await j.collect(reading('e1', ['a@svc', 10, 20], ['b@svc', 1, 2]));
    await j.collect(reading('e1', ['a@svc', 11, 20], ['b@svc', 1, 2]));
    expect(j.stats()).toMatchObject({ pendingRecords: 2, pendingEntries: 3, pendingBytes: 34n, trackedCounters: 2 });
    await j.ack(r!.reportId);
    expect(j.stats()).toMatchObject({ pendingRecords: 1, pendingEntries: 1, pendingBytes: 1n });
  });

  it('the journal directory is 0700 and its file 0600', async () => {
    const sub = join(dir, 'state', 'usage');
    const j = await UsageJournal.open(sub);
    open.push(j);
    expect((await stat(sub)).mode & 0o777).toBe(0o700);
    expect((await stat(join(sub, 'usage.journal'))).mode & 0o777).toBe(0o600);
  });
});
