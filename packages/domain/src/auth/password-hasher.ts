import { availableParallelism } from 'node:os';
import { type Algorithm, hash, verify } from '@node-rs/argon2';
import { createSlots } from '../shared/slots.ts';

export interface PasswordHashParams {
  memory_kib: number;
  iterations: number;
  parallelism: number;
  /** Hashes computed at once; default cores - 1 (at least 1). */
  concurrency?: number | undefined;
  /** Requests allowed to wait for a slot; more get UnavailableError (503) at once. */
  max_queue: number;
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Constant work whether or not `encoded` exists, so timing does not reveal unknown emails. */
  verify(encoded: string | null, password: string): Promise<boolean>;
  /** True when `encoded` was made with other parameters than today's (rehash on sign-in). */
  needsRehash(encoded: string): boolean;
  readonly concurrency: number;
}

const ARGON2ID = 2 as Algorithm;

/**
 * Argon2id behind a semaphore. Each hash holds ~19 MiB and a core for tens of
 * milliseconds on libuv's pool; letting a login flood run four at once on a 2-core box
 * starves the event loop. Capping at cores - 1 makes the flood queue (and beyond max_queue,
 * fail fast) while every other request keeps a core.
 */
export function createPasswordHasher(params: PasswordHashParams): PasswordHasher {
  const concurrency = params.concurrency ?? Math.max(1, availableParallelism() - 1);
  const options = {
    algorithm: ARGON2ID,
    memoryCost: params.memory_kib,
    timeCost: params.iterations,
    parallelism: params.parallelism,
  };
  const prefix = `$argon2id$v=19$m=${params.memory_kib},t=${params.iterations},p=${params.parallelism}$`;
  const slots = createSlots(concurrency, { maxQueue: params.max_queue, busyMessage: 'sign-in is busy; retry shortly' });
  const withSlot = <T>(fn: () => Promise<T>): Promise<T> => slots.run(fn);

  // A real hash of a random password: verifying against it costs what a real verify costs.
  let dummy: Promise<string> | undefined;
  const dummyHash = () => {
    dummy ??= hash(`dummy-${Math.random()}`, options);
    return dummy;
  };

  return {
    concurrency,
    hash: (password) => withSlot(() => hash(password, options)),
    async verify(encoded, password) {
      const target = encoded ?? (await dummyHash());
      return withSlot(async () => {
        try {
          return (await verify(target, password)) && encoded !== null;
        } catch {
          return false;
        }
      });
    },
    needsRehash: (encoded) => !encoded.startsWith(prefix),
  };
}
