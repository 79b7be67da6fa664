/**
 * The agent's usage write-ahead journal: engine traffic counters become UsageReport records on
 * disk before anything is sent, and a record leaves only when its UsageAck arrives. A kill -9 of
 * the agent at any moment, of the control plane, or a dropped connection loses and doubles
 * nothing.
 *
 * Why baselines and not read-with-reset: the engine's StatsService can hand out counters and
 * zero them in one call, but then the bytes live only in the agent's memory until its journal
 * write is durable; an agent killed in between loses them. So the caller reads counters WITHOUT
 * reset (cumulative since the engine process started) and the journal keeps, per engine
 * instance, the last value it accounted for (the baseline) of every subscription counter. A
 * collection computes delta = current - baseline and makes ONE durable write holding both the
 * report records and the new baselines of the counters that moved. A crash before that write
 * completes leaves the bytes in the engine's counters for the next collection; after it, they are
 * in the journal. There is no moment where they are in neither or in both.
 *
 * Rules that follow:
 * - The instance is an opaque string from the caller (e.g. `<pid>:<start time>` of the engine).
 *   A reading of a new instance starts every baseline at 0 and drops the old instance's. Before a
 *   planned engine restart, the caller collects from the old engine first; an agent restarted
 *   while its engine kept running collects from that engine (same instance) before replacing it.
 *   An engine that dies (kill -9, crash) takes the bytes counted since the last collection with
 *   it: nothing outside the engine ever saw them.
 * - A counter lower than its baseline within one instance (the engine reset it) counts its
 *   current value as the delta from 0.
 * - Chain users' counters (`chain:<chain_id>:<pos>`) are transit, never usage; emails of any
 *   other shape than `<subscription_id>@svc` are ignored. Both are counted in stats() only.
 * - A counter missing from one reading keeps its baseline for the instance's lifetime. Xray and
 *   v2ray never unregister a stats counter while running (UnregisterCounter has no caller), so a
 *   counter absent from a reading was only filtered out by the reader and comes back with its
 *   cumulative value: forgetting its baseline would report those bytes twice. The baselines are
 *   thus as many as the engine's own counters, and go with its instance.
 * - Report ids rise strictly per node even across a wiped state directory: a new id is
 *   max(last id + 1, Date.now() × 1000). (A wiped directory also loses the baselines: the next
 *   collection from a still-running engine reports its counters since the engine started again.)
 * - One collection's entries are split into records of at most maxEntriesPerRecord, each with
 *   its own id, all in the same write.
 * - The file stays bounded: when it passes max(compactAfterBytes, 2 × the last snapshot) it is
 *   rewritten as a snapshot (highest id, baselines, pending records); see journal-file.ts.
 *
 * A collection writes only the counters that moved, never every baseline: the cost of one is
 * proportional to the traffic since the last, plus one pass over the reading in memory.
 */

import { isChainEmail, subscriptionIdOf } from '@svc/proto';
import { encodeFrame, type Frame } from './frames.ts';
import { JournalFile } from './journal-file.ts';
import { type Collection, collectionFrame, type JournalRecord, JournalState, type UsageEntryDelta } from './journal-state.ts';

export type { JournalRecord, UsageEntryDelta };

export interface CounterReading {
  /** Identifies the engine process the counters come from; a new value means counters restarted from 0. */
  instance: string;
  counters: Array<{ email: string; uplink: bigint; downlink: bigint }>;
}

export interface UsageJournalOptions {
  /** Entries per record (UsageReport); default 50,000 keeps a report far below the gateway's 16 MiB Sync message limit. */
  maxEntriesPerRecord?: number;
  /** The file is compacted once it passes this many bytes (or twice its last snapshot, if larger). Default 32 MiB. */
  compactAfterBytes?: number;
  /** Milliseconds since the epoch, for report ids; default Date.now. */
  clock?: () => number;
}

export interface UsageJournalStats {
  pendingRecords: number;
  pendingEntries: number;
  /** Uplink + downlink bytes in records not yet acknowledged. */
  pendingBytes: bigint;
  /** Subscription counters with a baseline (of the current engine instance). */
  trackedCounters: number;
  /** Of the last reading: chain counters skipped, and counters of emails of no known shape (or repeated within the reading). */
  lastReading: { chainCounters: number; ignoredCounters: number };
  journalBytes: number;
  /** Bytes of a torn last write cut off when the journal was opened. */
  droppedTailBytes: number;
  compactions: number;
}

const DEFAULT_MAX_ENTRIES = 50_000;
const DEFAULT_COMPACT_AFTER = 32 * 2 ** 20;
/** Baselines per frame in a snapshot: keeps each frame's JSON well inside V8's string limit. */
const SNAPSHOT_CHUNK = 50_000;

export class UsageJournal {
  private readonly state = new JournalState();
  /** Operations run one at a time, in call order. */
  private queue: Promise<unknown> = Promise.resolve();
  private collections = 0;
  private lastReading = { chainCounters: 0, ignoredCounters: 0 };
  private snapshotBytes = 0;
  private compactions = 0;
  private closed = false;

  private constructor(
    private readonly file: JournalFile,
    private readonly droppedTailBytes: number,
    private readonly maxEntries: number,
    private readonly compactAfter: number,
    private readonly clock: () => number,
  ) {}

  /** Opens (creating) the journal in `dir` and replays it; a torn last write is detected and dropped. */
  static async open(dir: string, opts: UsageJournalOptions = {}): Promise<UsageJournal> {
    const maxEntries = opts.maxEntriesPerRecord ?? DEFAULT_MAX_ENTRIES;
    if (!Number.isInteger(maxEntries) || maxEntries < 1)
      throw new RangeError(`maxEntriesPerRecord must be a positive integer, got ${maxEntries}`);
    const { file, frames, droppedTailBytes } = await JournalFile.open(dir);
    const journal = new UsageJournal(
      file,
      droppedTailBytes,
      maxEntries,
      opts.compactAfterBytes ?? DEFAULT_COMPACT_AFTER,
      opts.clock ?? Date.now,
    );
    for (const f of frames) journal.state.replay(f);
    if (file.size > journal.compactAfter) await journal.compact();
    return journal;
  }

  /** Turns one reading into zero or more records (none when no counter moved), durable before resolving. */
  collect(reading: CounterReading): Promise<JournalRecord[]> {
    return this.serially(async () => {
      const seen = ++this.collections;
      const change = this.changeOf(reading, seen);
      if (!change) return [];
      await this.file.append(encodeFrame(collectionFrame(change)));
      this.state.applyCollection(change, seen);
      await this.compactIfDue();
      return change.records;
    });
  }

  /**
   * Bytes of `reading` that no record holds yet, per subscription (current counter less its
   * baseline, by collect's rules); reads only: nothing is written or marked. The entitlement
   * pass adds them to the journaled bytes between two collections.
   */
  unjournaled(reading: CounterReading): Map<string, bigint> {
    const s = this.state;
    const sameInstance = reading.instance === s.instance;
    const out = new Map<string, bigint>();
    for (const { email, uplink, downlink } of reading.counters) {
      const prev = sameInstance ? s.baselines.get(email) : undefined;
      if (prev && prev.up === uplink && prev.down === downlink) continue;
      const id = prev?.subscriptionId ?? subscriptionIdOf(email);
      if (id === undefined) continue;
      const up = prev && uplink >= prev.up ? uplink - prev.up : uplink;
      const down = prev && downlink >= prev.down ? downlink - prev.down : downlink;
      if (up + down > 0n) out.set(id, (out.get(id) ?? 0n) + up + down);
    }
    return out;
  }

  /** Unacknowledged records, ascending report id: what to (re)send, in this order, after every (re)connect. */
  pending(): JournalRecord[] {
    return [...this.state.pending.values()];
  }

  /** UsageAck(report_id): clears that record, durably. Unknown or already-cleared ids are ignored. */
  ack(reportId: bigint): Promise<void> {
    return this.serially(async () => {
      if (!this.state.pending.has(reportId)) return;
      await this.file.append(encodeFrame({ t: 'ack', id: reportId.toString() }));
      this.state.ack(reportId);
      await this.compactIfDue();
    });
  }

  stats(): UsageJournalStats {
    const s = this.state;
    return {
      pendingRecords: s.pending.size,
      pendingEntries: s.pendingEntries,
      pendingBytes: s.pendingBytes,
      trackedCounters: s.baselines.size,
      lastReading: { ...this.lastReading },
      journalBytes: this.file.size,
      droppedTailBytes: this.droppedTailBytes,
      compactions: this.compactions,
    };
  }

  close(): Promise<void> {
    return this.serially(async () => {
      this.closed = true;
      await this.file.close();
    });
  }

  private serially<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed) throw new Error('usage journal is closed');
      return op();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** What `reading` changes against the baselines, or undefined when nothing moved. Marks the counters it saw with `seen`. */
  private changeOf(reading: CounterReading, seen: number): Collection | undefined {
    const s = this.state;
    const sameInstance = reading.instance === s.instance;
    const base: Collection['base'] = [];
    const entries: UsageEntryDelta[] = [];
    // Counters without a baseline yet: to tell a repeated email within one reading (counted once, the repeat ignored).
    const fresh = new Set<string>();
    let chainCounters = 0;
    let ignoredCounters = 0;
    for (const { email, uplink, downlink } of reading.counters) {
      // Known counters (the common case) take the fast path: no parsing of the email, no allocation when unchanged.
      const prev = sameInstance ? s.baselines.get(email) : undefined;
      let subscriptionId: string;
      if (prev) {
        if (prev.seen === seen) {
          ignoredCounters++;
          continue;
        }
        prev.seen = seen;
        if (prev.up === uplink && prev.down === downlink) continue;
        subscriptionId = prev.subscriptionId;
      } else {
        const id = subscriptionIdOf(email);
        if (id === undefined) {
          if (isChainEmail(email)) chainCounters++;
          else ignoredCounters++;
          continue;
        }
        if (fresh.has(email)) {
          ignoredCounters++;
          continue;
        }
        fresh.add(email);
        if (uplink === 0n && downlink === 0n) continue;
        subscriptionId = id;
      }
      const up = prev && uplink >= prev.up ? uplink - prev.up : uplink;
      const down = prev && downlink >= prev.down ? downlink - prev.down : downlink;
      base.push({ email, up: uplink, down: downlink });
      if (up > 0n || down > 0n) entries.push({ subscriptionId, uplink: up, downlink: down });
    }
    this.lastReading = { chainCounters, ignoredCounters };
    const dropsOldInstance = !sameInstance && s.baselines.size > 0;
    if (base.length === 0 && !dropsOldInstance) return undefined;
    return { instance: reading.instance, base, records: this.recordsOf(entries) };
  }

  private recordsOf(entries: UsageEntryDelta[]): JournalRecord[] {
    const records: JournalRecord[] = [];
    let id = this.state.lastId + 1n;
    const floor = BigInt(Math.floor(this.clock())) * 1000n;
    if (floor > id) id = floor;
    for (let i = 0; i < entries.length; i += this.maxEntries) {
      records.push({ reportId: id++, entries: entries.slice(i, i + this.maxEntries) });
    }
    return records;
  }

  private async compactIfDue(): Promise<void> {
    if (this.file.size > Math.max(this.compactAfter, 2 * this.snapshotBytes)) await this.compact();
  }

  /** Rewrites the journal as: the highest id and the instance, the baselines in chunks, then each pending record. */
  private async compact(): Promise<void> {
    const s = this.state;
    const frames: Frame[] = [{ t: 'snap', last: s.lastId.toString(), instance: s.instance }];
    if (s.instance !== null) {
      const instance = s.instance;
      let chunk: Collection['base'] = [];
      const flush = () => {
        frames.push(collectionFrame({ instance, base: chunk, records: [] }));
        chunk = [];
      };
      for (const [email, b] of s.baselines) {
        chunk.push({ email, up: b.up, down: b.down });
        if (chunk.length === SNAPSHOT_CHUNK) flush();
      }
      if (chunk.length > 0) flush();
      for (const r of s.pending.values()) frames.push(collectionFrame({ instance, base: [], records: [r] }));
    }
    const encoded = frames.map(encodeFrame);
    await this.file.replace(encoded);
    this.snapshotBytes = this.file.size;
    this.compactions++;
  }
}
