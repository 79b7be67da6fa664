/**
 * Changes up to this many (entries out and in) are spliced into a copy of a sorted array; more,
 * and it is made anew (each splice moves up to every entry).
 */
export const SPLICE_UP_TO = 64;

/** The first index of `sorted` (ascending by `keyOf`, compared as strings) whose key is not below `key`. */
export function lowerBound<T>(sorted: readonly T[], key: string, keyOf: (t: T) => string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyOf(sorted[mid] as T) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
