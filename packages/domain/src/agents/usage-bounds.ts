import { type RawBuilder, sql } from 'kysely';

// Bounds on what a hostile node can make the arithmetic reach (int8 overflows would fail the
// statement, and a fold that fails takes the same oldest rows again: every fold would stall).
/** A single delta above this (1 PiB) is an agent bug, not traffic; a report's sum for one subscription is cut to it. */
export const MAX_DELTA = 2n ** 50n;
/** A fold's sum of staged bytes for one subscription is cut to this (4 PiB). */
export const MAX_SUM = 2n ** 52n;
/**
 * The counters (and hourly rows, and slices) saturate: what a credit adds to is taken at most at
 * this (2^59, 576 PB), so the sum, at most 2^59 + 2 × 100 × MAX_SUM, and the 80% check's five times
 * it stay within int8. No real subscription comes near it.
 */
export const COUNTER_CEILING = 2n ** 59n;
/** A counter's value (a column, or an expression of columns) as a credit adds to it (saturating at COUNTER_CEILING). */
export const saturated = (value: string | RawBuilder<unknown>) =>
  sql`least(${typeof value === 'string' ? sql.ref(value) : value}, ${String(COUNTER_CEILING)}::int8)`;
