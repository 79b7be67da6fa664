import { join } from 'node:path';
import { type AgentMessage, CutoffReason, type NodeConfig, subscriptionIdOf, type UserLimits, userEmail } from '@svc/proto';
import type { Logger } from 'pino';
import { serialQueue } from '../serial.ts';
import { ensurePrivateDir } from '../state-files.ts';
import { EntitlementBook, type PendingCutoffs } from './entitlement-book.ts';
import { bounded, cutReason, type Entitlement } from './entitlement-rule.ts';
import { type ClockSources, ServerClockEstimate } from './server-clock.ts';

/**
 * Entitlements enforced by the node while the control plane is away (issue 36.3): every pass
 * (default each second) the agent looks at its users' UserLimits against its estimate of the
 * control plane's clock (server-clock.ts) and the bytes counted against each user's slice
 * (entitlement-book.ts), and cuts a user whose time or slice ran out:
 *
 * 1. the cut is written to the book (durable) with a CutoffReport of its own id;
 * 2. the desired state is applied again without the cut users (`reapply`: the Applier leaves
 *    out what `withhold` names), i.e. each is removed hot from the engine (HandlerService) and
 *    its open connections are ended; the engine is not restarted and nobody else is touched;
 * 3. the report is sent, on every stream that opens and again every resendAfterMs until the
 *    control plane's CutoffAck with its id; then it is forgotten.
 *
 * Counting: the journal's records are folded into the book when they are made (`folded`, called
 * by the usage sender before it sends them); between two collections the pass adds what the
 * engine counted since the journal's last one (`peek`: one read of the engine's counters, no
 * write), so a slice is seen used up within one pass, not one usage interval. The counters are
 * read only while some uncut user has a slice. While the stream is up, a slice past its half
 * with new bytes has the usage collected and sent at once: the control plane grants the next
 * slice at half used, from the usage it receives, and should not have to wait for the next
 * collection to do it.
 */
export interface EnforcerDeps {
  /** The state directory: the book and the clock live in its entitlements/ directory. */
  stateDir: string;
  clock?: ClockSources;
  /** Bytes the engine counted since the journal's last collection, per subscription (null: no engine to read). */
  peek: () => Promise<ReadonlyMap<string, bigint> | null>;
  /** Reads the engine's counters into the usage journal and sends the new reports. */
  collect?: () => Promise<void>;
  /** Applies the desired state again (through the engine queue): the cut users leave the engine. */
  reapply: () => Promise<void>;
  send: (m: AgentMessage) => boolean;
  connected: () => boolean;
  log: Logger;
  /** Unacknowledged reports are sent again after this long. */
  resendAfterMs: number;
  /** Wall-clock ms, for report ids only (default Date.now). */
  wall?: () => number;
}

const EMPTY: ReadonlyMap<string, UserLimits> = new Map();

export class EntitlementEnforcer {
  private readonly serially = serialQueue();
  /** Limits of the desired state last applied, of the users it serves. */
  private limits: ReadonlyMap<string, UserLimits> = EMPTY;
  private readonly sentAt = new Map<bigint, number>();
  private passing = false;
  /*
   * What a pass looks at: every bounded user after new limits (fullPass), else the users the
   * engine or the journal counted bytes for since the last pass, and every user's time only once
   * the earliest not-after of the uncut users has come. So a pass over 10,000 users costs the
   * read of the counters and a look at the users that moved.
   */
  private fullPass = true;
  private anyBounded = false;
  private metered = false;
  private earliest: bigint | null = null;
  private readonly touched = new Set<string>();

  private constructor(
    private readonly deps: EnforcerDeps,
    private readonly book: EntitlementBook,
    readonly clock: ServerClockEstimate,
  ) {}

  static async open(deps: EnforcerDeps): Promise<EntitlementEnforcer> {
    const dir = join(deps.stateDir, 'entitlements');
    await ensurePrivateDir(dir);
    const book = await EntitlementBook.open(dir);
    const clock = await ServerClockEstimate.open(dir, deps.clock);
    deps.log.info({ clock: clock.source, cut: book.cut.size, pending_reports: book.reports.size }, 'entitlements loaded');
    return new EntitlementEnforcer(deps, book, clock);
  }

  /**
   * The Applier's filter: called with each desired state's configuration before it is applied.
   * Takes its limits (new slices start, users entitled again are lifted) and answers the emails
   * of the users that stay cut, which the engine must not have. A new slice starts from what
   * the engine has counted by now: bytes it counted before the slice arrived and the journal
   * had not taken yet do not count against it (read before the book is touched: a collection
   * in between counts them to the old slice and the new one starts that much below 0, which
   * only serves the user longer, by at most one pass).
   */
  async withhold(config: NodeConfig): Promise<ReadonlySet<string>> {
    const fresh = config.userLimits.some((l) => l.sliceId !== 0n && this.book.slices.get(l.subscriptionId)?.sliceId !== l.sliceId);
    const before = fresh ? await this.deps.peek().catch(() => null) : null;
    return this.serially(async () => {
      this.limits = limitsOf(config);
      this.anyBounded = EntitlementBook.anyBounded(this.limits);
      this.fullPass = true;
      const { changed, lifted } = this.book.grant(this.limits, this.clock.now(), before ?? EMPTY_COUNTS);
      if (changed) await this.book.save();
      if (lifted.length > 0) this.deps.log.info({ users: lifted.length, subscriptions: lifted.slice(0, 20) }, 'cut users entitled again');
      return this.withheld();
    });
  }

  /** Emails of the users cut now. */
  withheld(): ReadonlySet<string> {
    return new Set([...this.book.cut.keys()].map(userEmail));
  }

  /** The usage journal made these records (before they are sent): their bytes count against the slices. */
  folded(
    records: ReadonlyArray<{ reportId: bigint; entries: ReadonlyArray<{ subscriptionId: string; uplink: bigint; downlink: bigint }> }>,
  ): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    return this.serially(async () => {
      if (this.book.fold(records)) await this.book.save();
      for (const r of records) for (const e of r.entries) if (this.limits.has(e.subscriptionId)) this.touched.add(e.subscriptionId);
    });
  }

  /** Bytes counted against the user's slice (journaled ones only). */
  sliceUsed(subscriptionId: string): bigint {
    return this.book.used(subscriptionId);
  }

  /** One look at the bounded users (see fullPass); cuts the ones whose time or slice ran out. */
  async pass(): Promise<void> {
    if (this.passing || !this.anyBounded) return;
    this.passing = true;
    try {
      const unjournaled = this.metered || this.fullPass ? ((await this.deps.peek().catch(() => null)) ?? EMPTY_COUNTS) : EMPTY_COUNTS;
      let hurry = false;
      const report = await this.serially(async () => {
        const now = this.clock.now();
        const nowMs = BigInt(Math.floor(now));
        const look = new Set<string>(this.touched);
        this.touched.clear();
        for (const sub of unjournaled.keys()) look.add(sub);
        const full = this.fullPass;
        if (full || (this.earliest !== null && nowMs >= this.earliest)) {
          this.fullPass = false;
          this.earliest = null;
          this.metered = false;
          for (const [sub, l] of this.limits) {
            if (!bounded(l) || this.book.cut.has(sub)) continue;
            if (full || (l.notAfterMs > 0n && l.notAfterMs <= nowMs)) look.add(sub);
            if (l.notAfterMs > nowMs && (this.earliest === null || l.notAfterMs < this.earliest)) this.earliest = l.notAfterMs;
            if (l.sliceId !== 0n) this.metered = true;
          }
        }
        const due: Parameters<EntitlementBook['cutNow']>[0] = [];
        for (const sub of look) {
          const l = this.limits.get(sub);
          if (!l || !bounded(l) || this.book.cut.has(sub)) continue;
          const fresh = unjournaled.get(sub) ?? 0n;
          const used = l.sliceId === 0n ? 0n : this.book.used(sub) + fresh;
          const reason = cutReason(l, used, now);
          if (reason !== null) due.push({ subscriptionId: sub, reason, atMs: nowMs, limits: entitlementOf(l), usedBytes: used });
          else if (fresh > 0n && l.sliceId !== 0n && 2n * used >= l.sliceBytes) hurry = true;
        }
        if (due.length === 0) return null;
        const r = this.book.cutNow(due, (this.deps.wall ?? Date.now)());
        await this.book.save();
        // Who is metered (and the earliest time) again at the next pass, without the users cut now.
        this.fullPass = true;
        return r;
      });
      // A slice past its half with bytes the journal has not taken: the usage goes now rather than
      // at the next collection, so that a control plane that is there grants the next slice
      // before this one runs out (it grants at half used, from the usage it is sent).
      if (hurry && this.deps.connected()) void this.deps.collect?.().catch(() => {});
      if (!report) return;
      this.deps.log.warn(
        {
          report_id: String(report.reportId),
          clock: this.clock.source,
          cut: report.entries.length,
          // The first 20 (a mass expiry cuts thousands in one pass; the report has them all).
          users: report.entries.slice(0, 20).map((e) => ({
            subscription_id: e.subscriptionId,
            reason: e.reason === CutoffReason.CUTOFF_TIME ? 'time' : 'slice',
            slice_used_bytes: String(e.sliceUsedBytes),
          })),
        },
        'entitlement ran out: users cut',
      );
      await this.deps.reapply().catch((err) => this.deps.log.error({ err }, 'cut users not removed from the engine'));
      if (this.oldest() === report) this.send(report);
    } finally {
      this.passing = false;
    }
  }

  /** ServerMessage.clock. */
  async heard(serverNowMs: bigint): Promise<void> {
    const before = this.clock.now();
    await this.clock.heard(Number(serverNowMs));
    this.deps.log.debug({ server_now_ms: String(serverNowMs), moved_ms: Math.round(this.clock.now() - before) }, 'server clock');
  }

  /**
   * A stream opened: the oldest report not yet acknowledged goes again. Reports go one at a
   * time, in id order, each once the one before it is acknowledged: a control plane that
   * records report ids above the last one it recorded never sees a newer id before an older one.
   */
  opened(): void {
    this.sentAt.clear();
    this.sendOldest();
  }

  acknowledged(reportId: bigint): void {
    this.sentAt.delete(reportId);
    if (!this.book.ack(reportId)) return;
    void this.serially(() => this.book.save()).catch((err) =>
      this.deps.log.error({ err, report_id: String(reportId) }, 'cutoff ack not recorded'),
    );
    this.sendOldest();
  }

  /** The oldest report, sent again when it has had no ack for resendAfterMs. */
  resendStale(): void {
    if (!this.deps.connected()) return;
    const oldest = this.oldest();
    const at = oldest && this.sentAt.get(oldest.reportId);
    if (oldest && (at === undefined || at < Date.now() - this.deps.resendAfterMs)) this.send(oldest);
  }

  /** Reports not yet acknowledged (tests, status). */
  pending(): PendingCutoffs[] {
    return [...this.book.reports.values()];
  }

  private oldest(): PendingCutoffs | undefined {
    return this.book.reports.values().next().value;
  }

  private sendOldest(): void {
    const oldest = this.oldest();
    if (oldest) this.send(oldest);
  }

  private send(r: PendingCutoffs): void {
    if (this.deps.send({ cutoffs: { reportId: r.reportId, entries: r.entries } })) this.sentAt.set(r.reportId, Date.now());
  }
}

const EMPTY_COUNTS: ReadonlyMap<string, bigint> = new Map();

const entitlementOf = (l: UserLimits): Entitlement => ({ notAfterMs: l.notAfterMs, sliceId: l.sliceId, sliceBytes: l.sliceBytes });

/** The limits of the users the configuration serves (`<subscription_id>@svc` in some inbound). */
function limitsOf(config: NodeConfig): ReadonlyMap<string, UserLimits> {
  if (config.userLimits.length === 0) return EMPTY;
  const served = new Set<string>();
  for (const inbound of config.xray?.inbounds ?? [])
    for (const u of inbound.users) {
      const id = subscriptionIdOf(u.email);
      if (id !== undefined) served.add(id);
    }
  const out = new Map<string, UserLimits>();
  for (const l of config.userLimits) if (served.has(l.subscriptionId)) out.set(l.subscriptionId, l);
  return out;
}
