export interface AdmissionLimits {
  /** Admissions started per second (token bucket; a tenth of a second's worth of burst). */
  perSecond: number;
  /** Admissions in progress at once (from leaving the line until `release`). */
  concurrency: number;
  /** An arrival whose turn would come later than this is turned away, told when its turn would be. */
  maxWaitMs: number;
}

/** Why an arrival did not get in: the line is full (come back in `retryAfterMs`), a newer stream of the node took its place, or it left. */
export class AdmissionRefused extends Error {
  constructor(
    readonly reason: 'line-full' | 'replaced' | 'left',
    readonly retryAfterMs = 0,
  ) {
    super(
      reason === 'line-full'
        ? `the gateway is admitting a reconnecting fleet; come back in ${Math.ceil(retryAfterMs / 1000)} s`
        : reason === 'replaced'
          ? 'replaced by a newer stream of this node while waiting to be admitted'
          : 'left the line',
    );
  }
}

export interface AdmissionStats {
  admitted: number;
  turnedAway: number;
  replaced: number;
  /** Arrivals waiting now, and the longest wait of an admission since the last reading (ms). */
  waiting: number;
  longestWaitMs: number;
}

interface Entry {
  key: string;
  at: number;
  admit: (release: () => void) => void;
  refuse: (err: AdmissionRefused) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * The gateway's admission line (issue 17.3): after a gateway restart the whole fleet
 * reconnects at once; each stream's opening costs database work, and letting all of them at
 * the database together makes everything slow and everyone time out. So openings start at
 * most `perSecond` a second and `concurrency` at once, in order of arrival; the rest wait
 * with their stream open. An arrival whose turn would come after `maxWaitMs` is turned away
 * at once with when its turn would be (the gateway answers UNAVAILABLE with
 * grpc-retry-pushback-ms, and the agent comes back then): a line longer than that only holds
 * connections.
 *
 * Only agents whose certificate verified get here (the identity interceptor answers every
 * other Sync UNAUTHENTICATED from its headers), and a node holds one place: a newer stream
 * of the same node takes the older one's place (the older is refused, as the stream it would
 * have become would have been replaced). So strangers cannot fill the line, and a stolen
 * identity fills one place; a place left (the agent hung up) is given up at once.
 */
export class AdmissionLine {
  private tokens: number;
  private refilledAt: number;
  private inFlight = 0;
  private readonly waiting = new Map<string, Entry>();
  private timer: NodeJS.Timeout | null = null;
  private readonly burst: number;
  private stats: AdmissionStats = { admitted: 0, turnedAway: 0, replaced: 0, waiting: 0, longestWaitMs: 0 };

  constructor(
    readonly limits: AdmissionLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.burst = Math.max(1, Math.ceil(limits.perSecond / 10));
    this.tokens = this.burst;
    this.refilledAt = now();
  }

  get length(): number {
    return this.waiting.size;
  }

  /** Counters since the last call (waiting: now). */
  takeStats(): AdmissionStats {
    const s = { ...this.stats, waiting: this.waiting.size };
    this.stats = { admitted: 0, turnedAway: 0, replaced: 0, waiting: 0, longestWaitMs: 0 };
    return s;
  }

  /**
   * Waits for `key`'s turn; resolves with `release`, to call once the admission's work is done
   * (whatever its outcome). Rejects with AdmissionRefused.
   */
  enter(key: string, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new AdmissionRefused('left'));
    const previous = this.waiting.get(key);
    if (previous) {
      this.remove(previous);
      this.stats.replaced++;
      previous.refuse(new AdmissionRefused('replaced'));
    }
    this.refill();
    const turnInMs = this.turnInMs(this.waiting.size);
    if (turnInMs > this.limits.maxWaitMs) {
      this.stats.turnedAway++;
      return Promise.reject(new AdmissionRefused('line-full', Math.ceil(turnInMs)));
    }
    return new Promise<() => void>((resolve, reject) => {
      const entry: Entry = { key, at: this.now(), admit: resolve, refuse: reject, signal, onAbort: undefined };
      if (signal) {
        entry.onAbort = () => {
          if (this.waiting.get(key) !== entry) return;
          this.remove(entry);
          reject(new AdmissionRefused('left'));
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.waiting.set(key, entry);
      this.pump();
    });
  }

  /** Refuses everyone waiting (the gateway stops). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const e of [...this.waiting.values()]) {
      this.remove(e);
      e.refuse(new AdmissionRefused('line-full', 1000));
    }
  }

  /** When the arrival behind `ahead` others would start, at the configured rate. */
  private turnInMs(ahead: number): number {
    const short = ahead + 1 - this.tokens;
    return short <= 0 ? 0 : (short / this.limits.perSecond) * 1000;
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.refilledAt) / 1000) * this.limits.perSecond);
    this.refilledAt = t;
  }

  private remove(e: Entry): void {
    this.waiting.delete(e.key);
    if (e.onAbort) e.signal?.removeEventListener('abort', e.onAbort);
  }

  private pump(): void {
    this.refill();
    while (this.waiting.size > 0 && this.inFlight < this.limits.concurrency && this.tokens >= 1) {
      const e = this.waiting.values().next().value as Entry;
      this.remove(e);
      this.tokens -= 1;
      this.inFlight++;
      this.stats.admitted++;
      this.stats.longestWaitMs = Math.max(this.stats.longestWaitMs, this.now() - e.at);
      let released = false;
      e.admit(() => {
        if (released) return;
        released = true;
        this.inFlight--;
        this.pump();
      });
    }
    // Out of tokens with arrivals waiting: come back when the next one is due.
    if (this.waiting.size > 0 && this.tokens < 1 && this.inFlight < this.limits.concurrency && !this.timer) {
      const ms = Math.max(1, Math.ceil(((1 - this.tokens) / this.limits.perSecond) * 1000));
      this.timer = setTimeout(() => {
        this.timer = null;
        this.pump();
      }, ms);
    }
  }
}
