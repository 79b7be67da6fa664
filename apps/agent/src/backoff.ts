/**
 * Reconnect delays (spec 7.1, 8): exponential from 1 s to 60 s with full jitter, so a fleet
 * that lost its gateway at once does not come back in one wave. `reset` after a stream that
 * worked.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    readonly minMs = 1000,
    readonly maxMs = 60_000,
    private readonly random: () => number = Math.random,
  ) {}

  /** The next delay: uniform in [min, min(max, min * 2^attempt)]. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.minMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    return Math.round(this.minMs + (ceiling - this.minMs) * this.random());
  }

  reset(): void {
    this.attempt = 0;
  }
}
