/**
 * What cached promises resolved to, by promise: a cache hands back the same promise to every
 * reader until it drops the entry, so a reader holding that promise can read its value at once
 * (the fast path of GET /sub/{token}) and knows nothing stale: the cache decides what is fresh.
 */
export interface Settled<V> {
  /** `p` itself, its value remembered once it resolves. */
  track(p: Promise<V>): Promise<V>;
  /** The value `p` resolved to; undefined while it runs, when it failed, or when it was never tracked. */
  valueOf(p: Promise<V>): V | undefined;
}

export function settledValues<V>(): Settled<V> {
  const values = new WeakMap<Promise<V>, V>();
  return {
    track(p) {
      p.then(
        (v) => values.set(p, v),
        () => {},
      );
      return p;
    },
    valueOf: (p) => values.get(p),
  };
}
