import { describe, expect, it } from 'vitest';
import { createTurnBatcher } from './turn-batcher.ts';

const nextTurn = () => new Promise((r) => setImmediate(r));

/** A batcher that doubles numbers and records every batch it was asked to run. */
function doubler(maxBatch = 100, fail: (keys: number[]) => boolean = () => false) {
  const batches: number[][] = [];
  const double = createTurnBatcher<number, number>({
    maxBatch,
    run: async (keys) => {
      batches.push(keys);
      if (fail(keys)) throw new Error(`batch ${keys.join(',')} failed`);
      return (k) => k * 2;
    },
  });
  return { double, batches };
}

describe('createTurnBatcher', () => {
  it('requests made in one turn of the event loop go out as one batch', async () => {
    const { double, batches } = doubler();
    const results = await Promise.all([double(1), double(2), double(3)]);
    expect(results).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('requests made in a later turn go out in a batch of their own', async () => {
    const { double, batches } = doubler();
    const first = double(1);
    await nextTurn();
    const second = double(2);
    expect(await Promise.all([first, second])).toEqual([2, 4]);
    expect(batches).toEqual([[1], [2]]);
  });

  it('equal keys in one turn take one place in the batch and all get its result', async () => {
    const { double, batches } = doubler();
    expect(await Promise.all([double(7), double(7), double(8), double(7)])).toEqual([14, 14, 16, 14]);
    expect(batches).toEqual([[7, 8]]);
  });

  it('requests passed as fresh objects stay apart even when they look alike', async () => {
    const seen: Array<{ id: string }[]> = [];
    const write = createTurnBatcher<{ id: string }, void>({
      maxBatch: 10,
      run: async (rows) => {
        seen.push(rows);
        return () => undefined;
      },
    });
    await Promise.all([write({ id: 'a' }), write({ id: 'a' })]);
    expect(seen).toEqual([[{ id: 'a' }, { id: 'a' }]]);
  });

  it('batches never exceed the maximum, and every request is answered', async () => {
    const { double, batches } = doubler(3);
    const keys = Array.from({ length: 10 }, (_, i) => i);
    expect(await Promise.all(keys.map(double))).toEqual(keys.map((k) => k * 2));
    expect(batches.map((b) => b.length)).toEqual([3, 3, 3, 1]);
    expect(batches.flat()).toEqual(keys);
  });

  it('a failed batch rejects exactly its own waiters', async () => {
    const { double } = doubler(2, (keys) => keys.includes(3));
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map(double));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason.message).toBe('batch 3,4 failed');
  });

  it('a key settled during the batch is answered at once and keeps its result if the batch fails later', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const source = createTurnBatcher<string, string>({
      maxBatch: 10,
      run: async (_keys, settle) => {
        settle('early', 'ready');
        await gate;
        throw new Error('the rest failed');
      },
    });
    const early = source('early');
    const late = source('late');
    expect(await early).toBe('ready');
    release();
    await expect(late).rejects.toThrow('the rest failed');
    await expect(early).resolves.toBe('ready');
  });

  it('with maxInFlight 1, keys asked in many turns while a batch runs go out together when it ends', async () => {
    const batches: number[][] = [];
    let release: () => void = () => {};
    const gate = () =>
      new Promise<void>((r) => {
        release = r;
      });
    let open = gate();
    const double = createTurnBatcher<number, number>({
      maxBatch: 100,
      maxInFlight: 1,
      run: async (keys) => {
        batches.push(keys);
        await open;
        return (k) => k * 2;
      },
    });
    const first = double(1);
    await nextTurn();
    const later = [double(2)];
    await nextTurn();
    later.push(double(3));
    await nextTurn();
    later.push(double(4));
    await nextTurn();
    expect(batches).toEqual([[1]]);
    const held = release;
    open = gate();
    held();
    expect(await first).toBe(2);
    for (let i = 0; i < 5 && batches.length < 2; i++) await nextTurn();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    release();
    expect(await Promise.all(later)).toEqual([4, 6, 8]);
  });

  it('with maxInFlight 2 and maxBatch 2, a turn of five keys runs two batches and the fifth key after one ends', async () => {
    const batches: number[][] = [];
    const double = createTurnBatcher<number, number>({
      maxBatch: 2,
      maxInFlight: 2,
      run: async (keys) => {
        batches.push(keys);
        return (k) => k * 2;
      },
    });
    expect(await Promise.all([1, 2, 3, 4, 5].map(double))).toEqual([2, 4, 6, 8, 10]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('with lingerMs, keys asked over several turns within the wait go out as one batch when it ends', async () => {
    const batches: number[][] = [];
    const double = createTurnBatcher<number, number>({
      maxBatch: 100,
      lingerMs: 40,
      run: async (keys) => {
        batches.push(keys);
        return (k) => k * 2;
      },
    });
    const asked = [double(1)];
    await nextTurn();
    asked.push(double(2));
    await new Promise((r) => setTimeout(r, 10));
    asked.push(double(3));
    await nextTurn();
    expect(batches).toEqual([]);
    expect(await Promise.all(asked)).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('with lingerMs, a full batch goes on the next turn without waiting', async () => {
    const batches: number[][] = [];
    const double = createTurnBatcher<number, number>({
      maxBatch: 3,
      lingerMs: 60_000,
      run: async (keys) => {
        batches.push(keys);
        return (k) => k * 2;
      },
    });
    const first = double(1);
    await nextTurn();
    const rest = [double(2), double(3)];
    expect(await Promise.all([first, ...rest])).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });
});
