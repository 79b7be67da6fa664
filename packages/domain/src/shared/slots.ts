import { UnavailableError } from '../errors.ts';

export interface Slots {
  readonly concurrency: number;
  /** Runs `fn` when a slot is free; with `maxQueue` waiting already, fails at once (503). */
  run<T>(fn: () => Promise<T>): Promise<T>;
}

/**
 * A counting semaphore: at most `concurrency` callers run at once, the rest wait in arrival
 * order. For work that thrashes when run wide on a small machine (Argon2 hashes, usage
 * ingest transactions).
 */
export function createSlots(concurrency: number, opts: { maxQueue?: number; busyMessage?: string } = {}): Slots {
  let running = 0;
  const waiting: Array<() => void> = [];
  return {
    concurrency,
    async run(fn) {
      if (running >= concurrency) {
        if (opts.maxQueue !== undefined && waiting.length >= opts.maxQueue)
          throw new UnavailableError(opts.busyMessage ?? 'busy; retry shortly', 1);
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else {
        running++;
      }
      try {
        return await fn();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else running--;
      }
    },
  };
}
