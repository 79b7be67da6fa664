import type { MessageBus, Unsubscribe } from './bus.ts';
import type { Clock } from './clock.ts';

export interface BusInvalidatedCacheOptions<V> {
  /** A message on any of these topics empties the cache, in every process that holds one. */
  topics: readonly string[];
  /** Read again at least this often: the bus delivers at most once. */
  maxAgeMs: number;
  /** Keys kept; past this the cache starts over. */
  maxEntries: number;
  /** Whether a value is worth keeping (e.g. not an unknown token: guesses must not fill the memory). */
  keep?: (value: V) => boolean;
  /** The one key a message names (then only that key is dropped); without it, or for undefined, all are. */
  keyOf?: (message: unknown) => string | undefined;
}

export interface BusInvalidatedCache<V> {
  /** The value read for `key` within the age limit, else `load()`'s (shared by callers while it runs). */
  get(key: string, load: () => Promise<V>): Promise<V>;
  /**
   * What `get` would hand back now when that is a value already read (no load, no promise): for
   * callers that answer at once when they can and call `get` otherwise. Undefined when `get`
   * would have to wait (nothing held for the key, its read still running, or too old).
   */
  peek(key: string): V | undefined;
  /** Drops what this process holds of one key (or of all). */
  forget(key?: string): void;
  /** Ends the bus subscriptions and empties the cache; later reads go to `load` every time. */
  stop(): Promise<void>;
}

interface Entry<V> {
  at: number;
  value: Promise<V>;
  /** Whether `value` has resolved and is kept; `result` is then what it resolved to. */
  settled: boolean;
  result: V | undefined;
}

/**
 * A per-process cache that other processes can empty by publishing on the bus. Failed reads
 * are dropped so the next caller tries again; ages come from the injected clock. When the
 * bus's connection comes back after an outage everything is dropped (changes announced
 * meanwhile never arrived).
 */
export function createBusInvalidatedCache<V>(
  deps: { bus: MessageBus; clock: Clock },
  opts: BusInvalidatedCacheOptions<V>,
): BusInvalidatedCache<V> {
  const entries = new Map<string, Entry<V>>();
  const clear = () => entries.clear();
  const drop = (key?: string): void => {
    if (key === undefined) clear();
    else entries.delete(key);
  };
  const onMessage = (message: unknown) => drop(opts.keyOf?.(message));
  let stopped = false;
  // Until a subscription is live a change could be missed: what was read meanwhile is dropped.
  const subscriptions = opts.topics.map((topic) =>
    deps.bus.subscribe(topic, onMessage).then(
      (unsubscribe) => {
        clear();
        return unsubscribe;
      },
      // Without the subscription the age limit still bounds staleness.
      (): Unsubscribe | undefined => undefined,
    ),
  );

  // Messages published while the bus was down are lost: start over when it is back.
  const offReconnect = deps.bus.onReconnect?.(clear);

  const forgetEntry = (key: string, entry: Entry<V>) => {
    if (entries.get(key) === entry) entries.delete(key);
  };
  // A clock that went back also reads again.
  const fresh = (entry: Entry<V>, now: number) => now - entry.at <= opts.maxAgeMs && now >= entry.at;

  return {
    get(key, load) {
      if (stopped) return load();
      const now = deps.clock.now().getTime();
      const hit = entries.get(key);
      if (hit && fresh(hit, now)) return hit.value;
      if (entries.size >= opts.maxEntries) entries.clear();
      const entry: Entry<V> = { at: now, value: load(), settled: false, result: undefined };
      entries.set(key, entry);
      entry.value.then(
        (value) => {
          if (opts.keep && !opts.keep(value)) forgetEntry(key, entry);
          else {
            entry.result = value;
            entry.settled = true;
          }
        },
        () => forgetEntry(key, entry),
      );
      return entry.value;
    },
    peek(key) {
      const hit = entries.get(key);
      if (!hit?.settled || stopped || !fresh(hit, deps.clock.now().getTime())) return undefined;
      return hit.result;
    },
    forget: drop,
    async stop() {
      stopped = true;
      offReconnect?.();
      clear();
      for (const unsubscribe of await Promise.all(subscriptions)) await unsubscribe?.();
    },
  };
}
