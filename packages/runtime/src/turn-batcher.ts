export interface TurnBatcherOptions<K, V> {
  /** Most keys in one batch; a turn with more runs several batches side by side. */
  maxBatch: number;
  /**
   * Does one batch's work. `settle` answers a key's callers as soon as its result is ready
   * (later results for that key are ignored); the function it resolves with answers the keys
   * still unsettled when it ends. A rejection rejects exactly those unsettled keys.
   */
  run: (keys: K[], settle: (key: K, value: V) => void) => Promise<(key: K) => V>;
}

interface Waiter<V> {
  resolve: (value: V) => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the requests made in one turn of the event loop and runs them as batches on the
 * next (setImmediate): one burst of callers, such as every session a bus message reaches,
 * costs one statement instead of one per caller. Keys compare as Map keys do: equal strings
 * share one place in the batch and its result, while a fresh object per request keeps
 * requests apart.
 */
export function createTurnBatcher<K, V>(opts: TurnBatcherOptions<K, V>): (key: K) => Promise<V> {
  const maxBatch = Math.max(1, opts.maxBatch);
  let pending = new Map<K, Waiter<V>[]>();

  const runBatch = async (batch: Map<K, Waiter<V>[]>): Promise<void> => {
    const settle = (key: K, value: V): void => {
      const waiters = batch.get(key);
      if (!waiters) return;
      batch.delete(key);
      for (const w of waiters) w.resolve(value);
    };
    try {
      const rest = await opts.run([...batch.keys()], settle);
      for (const key of [...batch.keys()]) settle(key, rest(key));
    } catch (err) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
      batch.clear();
    }
  };

  const flush = (): void => {
    const all = [...pending];
    pending = new Map();
    for (let i = 0; i < all.length; i += maxBatch) void runBatch(new Map(all.slice(i, i + maxBatch)));
  };

  return (key) =>
    new Promise<V>((resolve, reject) => {
      const waiters = pending.get(key);
      if (waiters) {
        waiters.push({ resolve, reject });
        return;
      }
      if (pending.size === 0) setImmediate(flush);
      pending.set(key, [{ resolve, reject }]);
    });
}
