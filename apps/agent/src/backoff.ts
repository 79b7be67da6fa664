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

/** The longest wait a gateway's pushback may ask for (a bad value must not park an agent for hours). */
export const MAX_PUSHBACK_MS = 10 * 60_000;

/**
 * The gateway named when to come back (`grpc-retry-pushback-ms` on UNAVAILABLE: its admission
 * line is full until then): that, plus up to a tenth more (at least a quarter second) of
 * jitter, so agents turned away in the same instant do not return in one wave. null when the
 * value is not a number of milliseconds (the usual backoff applies).
 */
export function pushbackDelay(value: string | undefined, random: () => number = Math.random): number | null {
  if (value === undefined || !/^\d{1,9}$/.test(value.trim())) return null;
  const ms = Math.min(Number(value), MAX_PUSHBACK_MS);
  return Math.round(ms + Math.max(250, ms / 10) * random());
}

/**
 * The Sync channel's own reconnect schedule (grpc-js: the first retry after
 * `grpc.initial_reconnect_backoff_ms`, then x1.6 each time, +-20%, up to the maximum). grpc-js's
 * jitter alone keeps a fleet that lost its gateway at the same instant in waves: every agent
 * retries at about 1, 2, 3.6, 6.2, 10.3 s, so a restarted gateway meets its whole fleet within
 * a second or so, and the listen queue drops what it cannot hold (issue 17.3). Each agent
 * draws its own first delay, uniform in [min, 2 min): the schedules drift apart by up to a
 * factor of two from the first retry on, a restarted gateway sees its fleet arrive spread over
 * seconds, and one agent's reconnect is at most `min` slower than before.
 */
export function channelReconnectOptions(
  random: () => number = Math.random,
  minMs = 1000,
  maxMs = 60_000,
): { 'grpc.initial_reconnect_backoff_ms': number; 'grpc.max_reconnect_backoff_ms': number } {
  return { 'grpc.initial_reconnect_backoff_ms': Math.floor(minMs * (1 + random())), 'grpc.max_reconnect_backoff_ms': maxMs };
}
