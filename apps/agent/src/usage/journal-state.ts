/**
 * What the journal knows, in memory: the engine instance its baselines belong to, one baseline
 * per subscription counter, the records not yet acknowledged (ascending report id) and the
 * highest id ever issued. Replay and live writes change it through the same three verbs
 * (reset, applyCollection, ack), so what a restarted agent rebuilds from the file is exactly
 * what the crashed one held after its last durable write.
 */
import { subscriptionIdOf } from '@svc/proto';
import type { CollectionFrame, Frame } from './frames.ts';

export interface UsageEntryDelta {
  subscriptionId: string;
  uplink: bigint;
  downlink: bigint;
}

export interface JournalRecord {
  reportId: bigint;
  entries: UsageEntryDelta[];
}

export interface Baseline {
  subscriptionId: string;
  up: bigint;
  down: bigint;
  /** The collection that last saw this counter (to tell an email repeated within one reading). */
  seen: number;
}

/** One durable write's worth of change. */
export interface Collection {
  instance: string;
  base: Array<{ email: string; up: bigint; down: bigint }>;
  records: JournalRecord[];
}

export class JournalState {
  instance: string | null = null;
  readonly baselines = new Map<string, Baseline>();
  /** Insertion order is ascending report id: ids only grow and replay keeps file order. */
  readonly pending = new Map<bigint, JournalRecord>();
  lastId = 0n;
  pendingEntries = 0;
  pendingBytes = 0n;

  reset(lastId: bigint, instance: string | null): void {
    this.instance = instance;
    this.baselines.clear();
    this.pending.clear();
    this.lastId = lastId;
    this.pendingEntries = 0;
    this.pendingBytes = 0n;
  }

  applyCollection(c: Collection, seen: number): void {
    if (c.instance !== this.instance) {
      this.instance = c.instance;
      this.baselines.clear();
    }
    for (const { email, up, down } of c.base) {
      const b = this.baselines.get(email);
      if (b) {
        b.up = up;
        b.down = down;
        b.seen = seen;
      } else this.baselines.set(email, { subscriptionId: subscriptionIdOf(email) ?? email, up, down, seen });
    }
    for (const r of c.records) {
      this.pending.set(r.reportId, r);
      if (r.reportId > this.lastId) this.lastId = r.reportId;
      this.pendingEntries += r.entries.length;
      for (const e of r.entries) this.pendingBytes += e.uplink + e.downlink;
    }
  }

  /** Clears the record; false when no such record is pending. */
  ack(reportId: bigint): boolean {
    const r = this.pending.get(reportId);
    if (!r) return false;
    this.pending.delete(reportId);
    this.pendingEntries -= r.entries.length;
    for (const e of r.entries) this.pendingBytes -= e.uplink + e.downlink;
    return true;
  }

  replay(frame: Frame): void {
    if (frame.t === 'snap') this.reset(BigInt(frame.last), frame.instance);
    else if (frame.t === 'ack') this.ack(BigInt(frame.id));
    else this.applyCollection(collectionOf(frame), 0);
  }
}

export function collectionFrame(c: Collection): CollectionFrame {
  const base: string[] = new Array(c.base.length * 3);
  let i = 0;
  for (const { email, up, down } of c.base) {
    base[i++] = email;
    base[i++] = up.toString();
    base[i++] = down.toString();
  }
  const recs = c.records.map((r) => {
    const e: string[] = new Array(r.entries.length * 3);
    let j = 0;
    for (const x of r.entries) {
      e[j++] = x.subscriptionId;
      e[j++] = x.uplink.toString();
      e[j++] = x.downlink.toString();
    }
    return { id: r.reportId.toString(), e };
  });
  return { t: 'col', instance: c.instance, base, recs };
}

function collectionOf(f: CollectionFrame): Collection {
  const base: Collection['base'] = [];
  for (let i = 0; i < f.base.length; i += 3) {
    base.push({ email: f.base[i] as string, up: BigInt(f.base[i + 1] as string), down: BigInt(f.base[i + 2] as string) });
  }
  const records = f.recs.map((r) => {
    const entries: UsageEntryDelta[] = [];
    for (let i = 0; i < r.e.length; i += 3) {
      entries.push({ subscriptionId: r.e[i] as string, uplink: BigInt(r.e[i + 1] as string), downlink: BigInt(r.e[i + 2] as string) });
    }
    return { reportId: BigInt(r.id), entries };
  });
  return { instance: f.instance, base, records };
}
