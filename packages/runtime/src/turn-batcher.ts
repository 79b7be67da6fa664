export interface TurnBatcherOptions<K, V> {
  /** Most keys in one batch; a turn with more runs several batches side by side. */
  maxBatch: number;
  /**
   * Does one batch's work. `settle` answers a key's callers as soon as its result is ready
   * (later results for that key are ignored); the function it resolves with answers the keys
   * still unsettled when it ends. A rejection rejects exactly those unsettled keys.
   */
  run: (keys: K[], settle: (key: K, value: V) => void) => Promise<(key: K) => V>;
  /**
   * Most batches running at once (default: no bound). At the bound, the keys asked for keep
   * gathering until a batch ends, then go out together: with one database connection (the
   * embedded PGlite) the statements would only queue there anyway, one per turn with a key or
   * two each, while one statement for everything that arrived meanwhile costs about the same.
   */
  maxInFlight?: number;
  /**
   * How long the first key waits for others before its batch runs (default 0: the next turn).
   * For writes nobody waits on for long (a StatusReport every 30 s per stream): 10,000 streams'
   * reports trickle in one or two a turn, and a short wait turns ~300 single-row statements a
   * second into a few. A batch of maxBatch keys runs at once.
   */
  lingerMs?: number;
}

interface Waiter<V> {
  resolve: (value: V) => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the requests made in one turn of the event loop and runs them as batches on the
 * next (setImmediate; lingerMs after the first with lingerMs; with maxInFlight batches running,
 * when one of them ends): one burst of callers, such as every session a bus message reaches,
 * costs one statement instead of one per caller. Keys compare as Map keys do: equal strings
 * share one place in the batch and its result, while a fresh object per request keeps
 * requests apart.
 */
export function createTurnBatcher<K, V>(opts: TurnBatcherOptions<K, V>): (key: K) => Promise<V> {
  const maxBatch = Math.max(1, opts.maxBatch);
  const maxInFlight = Math.max(1, opts.maxInFlight ?? Number.POSITIVE_INFINITY);
  let pending = new Map<K, Waiter<V>[]>();
  let inFlight = 0;
  let flushQueued = false;

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
    flushQueued = false;
    if (pending.size === 0 || inFlight >= maxInFlight) return;
    const all = [...pending];
    const room = Number.isFinite(maxInFlight) ? (maxInFlight - inFlight) * maxBatch : all.length;
    pending = new Map(all.slice(room));
    for (let i = 0; i < Math.min(all.length, room); i += maxBatch) {
      inFlight++;
      void runBatch(new Map(all.slice(i, Math.min(i + maxBatch, room)))).finally(() => {
        inFlight--;
        queueFlush(true);
      });
    }
  };
  const lingerMs = Math.max(0, opts.lingerMs ?? 0);
  let lingering: NodeJS.Timeout | undefined;
  /** `now`: on the next turn whatever lingerMs says (a batch ended: what waited meanwhile has waited). */
  const queueFlush = (now = false): void => {
    if (pending.size === 0) return;
    // A full batch waiting goes on the next turn, lingering or not.
    if (lingering && (now || pending.size >= maxBatch)) {
      clearTimeout(lingering);
      lingering = undefined;
      flushQueued = false;
    }
    if (flushQueued) return;
    flushQueued = true;
    if (lingerMs > 0 && !now && pending.size < maxBatch)
      lingering = setTimeout(() => {
        lingering = undefined;
        flush();
      }, lingerMs);
    else setImmediate(flush);
  };

  return (key) =>
    new Promise<V>((resolve, reject) => {
      const waiters = pending.get(key);
      if (waiters) {
        waiters.push({ resolve, reject });
        return;
      }
      pending.set(key, [{ resolve, reject }]);
      queueFlush();
    });
}
