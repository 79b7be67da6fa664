/**
 * When the worker re-reads a pending payment from its provider: first a minute after the
 * checkout (a payer who paid at once and whose webhook got lost), then backing off, doubling
 * up to an hour between reads, until the payment ends or expires (recheck-payments.ts).
 */
export const FIRST_RECHECK_MS = 60_000;
export const MAX_RECHECK_GAP_MS = 3600_000;

export const firstRecheckAt = (now: Date): Date => new Date(now.getTime() + FIRST_RECHECK_MS);

/** The next read after `attempts` reads so far. */
export function nextRecheckAt(now: Date, attempts: number): Date {
  const gap = Math.min(MAX_RECHECK_GAP_MS, FIRST_RECHECK_MS * 2 ** Math.min(attempts, 16));
  return new Date(now.getTime() + gap);
}
