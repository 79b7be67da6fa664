import { join } from 'node:path';
import type { Cutoff, CutoffReason, UserLimits } from '@svc/proto';
import { readOptional, writeFileAtomic } from '../state-files.ts';
import { bounded, type Entitlement, staysCut } from './entitlement-rule.ts';

/**
 * What the agent knows about its users' entitlements, on disk (entitlements/book.json, one
 * atomic write per change: a kill -9 leaves the old book or the new one):
 * - slices: per metered user, the slice in force and the bytes counted against it. A new
 *   slice_id starts again from 0 (less what the engine counted before it and the journal has
 *   not taken yet: the count may start below 0); bytes come from the usage journal's records (fold), each
 *   record folded once (`folded` is the highest report id folded: the records still pending in
 *   the journal after a crash are folded again only if they are newer);
 * - cut: the users cut, each with the limits it was cut under (the latch of entitlement-rule.ts);
 * - reports: CutoffReports not yet acknowledged, and the highest report id ever issued. Ids
 *   are max(last + 1, wall ms × 1000), like usage report ids, so they keep rising even over a
 *   wiped state directory.
 */
export interface CutRecord extends Entitlement {
  reason: CutoffReason;
  atMs: bigint;
}

export interface PendingCutoffs {
  reportId: bigint;
  entries: Cutoff[];
}

interface BookFile {
  v: 1;
  folded: string;
  last_report: string;
  slices: Record<string, [slice: string, used: string]>;
  cut: Record<string, { reason: number; at: string; not_after: string; slice: string; slice_bytes: string }>;
  reports: Array<{ id: string; entries: Array<{ sub: string; reason: number; at: string; slice: string; used: string }> }>;
}

const FILE = 'book.json';

export class EntitlementBook {
  readonly slices = new Map<string, { sliceId: bigint; used: bigint }>();
  readonly cut = new Map<string, CutRecord>();
  /** Ascending report id. */
  readonly reports = new Map<bigint, PendingCutoffs>();
  folded = 0n;
  lastReportId = 0n;

  private constructor(private readonly file: string) {}

  static async open(dir: string): Promise<EntitlementBook> {
    const book = new EntitlementBook(join(dir, FILE));
    const text = await readOptional(book.file);
    if (text !== null) book.load(JSON.parse(text) as BookFile);
    return book;
  }

  used(subscriptionId: string): bigint {
    return this.slices.get(subscriptionId)?.used ?? 0n;
  }

  /**
   * The limits of a desired state: slices of metered users start (a new slice_id from 0), users
   * without one are forgotten; cut users whose limits now entitle them are lifted. True when
   * anything changed (then save()).
   */
  grant(
    limits: ReadonlyMap<string, UserLimits>,
    nowMs: number,
    /** Bytes counted by the engine and not yet by the journal, per subscription: not the new slices'. */
    unjournaled: ReadonlyMap<string, bigint> = new Map(),
  ): { changed: boolean; lifted: string[] } {
    let changed = false;
    for (const [sub, l] of limits) {
      if (l.sliceId === 0n) continue;
      if (this.slices.get(sub)?.sliceId !== l.sliceId) {
        this.slices.set(sub, { sliceId: l.sliceId, used: -(unjournaled.get(sub) ?? 0n) });
        changed = true;
      }
    }
    for (const sub of this.slices.keys())
      if ((limits.get(sub)?.sliceId ?? 0n) === 0n) {
        this.slices.delete(sub);
        changed = true;
      }
    const lifted: string[] = [];
    for (const [sub, c] of this.cut) {
      if (staysCut(c, limits.get(sub), this.used(sub), nowMs)) continue;
      this.cut.delete(sub);
      lifted.push(sub);
      changed = true;
    }
    return { changed, lifted };
  }

  /** Usage records of the journal, each counted once against the slice in force. True when a count moved. */
  fold(
    records: ReadonlyArray<{ reportId: bigint; entries: ReadonlyArray<{ subscriptionId: string; uplink: bigint; downlink: bigint }> }>,
  ): boolean {
    let changed = false;
    for (const r of records) {
      if (r.reportId <= this.folded) continue;
      this.folded = r.reportId;
      changed = true;
      for (const e of r.entries) {
        const s = this.slices.get(e.subscriptionId);
        if (s) s.used += e.uplink + e.downlink;
      }
    }
    return changed;
  }

  /** Users cut now: latched, and one CutoffReport (its id issued) holding them. */
  cutNow(
    entries: Array<{ subscriptionId: string; reason: CutoffReason; atMs: bigint; limits: Entitlement; usedBytes: bigint }>,
    wallMs: number,
  ): PendingCutoffs {
    let id = this.lastReportId + 1n;
    const floor = BigInt(Math.floor(wallMs)) * 1000n;
    if (floor > id) id = floor;
    this.lastReportId = id;
    const report: PendingCutoffs = {
      reportId: id,
      entries: entries.map((e) => ({
        subscriptionId: e.subscriptionId,
        reason: e.reason,
        atMs: e.atMs,
        sliceId: e.limits.sliceId,
        sliceUsedBytes: e.usedBytes,
      })),
    };
    for (const e of entries)
      this.cut.set(e.subscriptionId, {
        reason: e.reason,
        atMs: e.atMs,
        notAfterMs: e.limits.notAfterMs,
        sliceId: e.limits.sliceId,
        sliceBytes: e.limits.sliceBytes,
      });
    this.reports.set(id, report);
    return report;
  }

  /** CutoffAck: the report is forgotten. False when no such report is pending. */
  ack(reportId: bigint): boolean {
    return this.reports.delete(reportId);
  }

  /** Whether any user is bounded by its limits (a time or a slice). */
  static anyBounded(limits: ReadonlyMap<string, UserLimits>): boolean {
    for (const l of limits.values()) if (bounded(l)) return true;
    return false;
  }

  save(): Promise<void> {
    const f: BookFile = {
      v: 1,
      folded: this.folded.toString(),
      last_report: this.lastReportId.toString(),
      slices: {},
      cut: {},
      reports: [],
    };
    for (const [sub, s] of this.slices) f.slices[sub] = [s.sliceId.toString(), s.used.toString()];
    for (const [sub, c] of this.cut)
      f.cut[sub] = {
        reason: c.reason,
        at: c.atMs.toString(),
        not_after: c.notAfterMs.toString(),
        slice: c.sliceId.toString(),
        slice_bytes: c.sliceBytes.toString(),
      };
    for (const r of this.reports.values())
      f.reports.push({
        id: r.reportId.toString(),
        entries: r.entries.map((e) => ({
          sub: e.subscriptionId,
          reason: e.reason,
          at: e.atMs.toString(),
          slice: e.sliceId.toString(),
          used: e.sliceUsedBytes.toString(),
        })),
      });
    return writeFileAtomic(this.file, JSON.stringify(f));
  }

  private load(f: BookFile): void {
    if (f.v !== 1) throw new Error(`${this.file}: unknown version ${String(f.v)}`);
    this.folded = BigInt(f.folded);
    this.lastReportId = BigInt(f.last_report);
    for (const [sub, [slice, used]] of Object.entries(f.slices)) this.slices.set(sub, { sliceId: BigInt(slice), used: BigInt(used) });
    for (const [sub, c] of Object.entries(f.cut))
      this.cut.set(sub, {
        reason: c.reason as CutoffReason,
        atMs: BigInt(c.at),
        notAfterMs: BigInt(c.not_after),
        sliceId: BigInt(c.slice),
        sliceBytes: BigInt(c.slice_bytes),
      });
    for (const r of f.reports) {
      const reportId = BigInt(r.id);
      this.reports.set(reportId, {
        reportId,
        entries: r.entries.map((e) => ({
          subscriptionId: e.sub,
          reason: e.reason as CutoffReason,
          atMs: BigInt(e.at),
          sliceId: BigInt(e.slice),
          sliceUsedBytes: BigInt(e.used),
        })),
      });
    }
  }
}
