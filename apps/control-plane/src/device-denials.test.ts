import { describe, expect, it } from 'vitest';
import { coalescedRead } from './device-denials.ts';

// The fleet's refused addresses are read once for many streams, but never with a read that
// started before a stream asked (it could predate a denial the stream must get).

function controlled() {
  const started: Array<{ resolve: (v: number) => void; reject: (e: Error) => void }> = [];
  const read = () =>
    new Promise<number>((resolve, reject) => {
      started.push({ resolve, reject });
    });
  return { started, read };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('coalescedRead: each caller gets a read that started after it asked', () => {
  it('callers while a read runs share the next one, started when it settles; nobody gets the read that was running when they asked', async () => {
    const { started, read } = controlled();
    const shared = coalescedRead(read);
    const a = shared();
    expect(started).toHaveLength(1);
    const b = shared();
    const c = shared();
    // B and C asked after read 1 began: they wait for read 2, which has not started yet.
    expect(started).toHaveLength(1);
    started[0]?.resolve(1);
    expect(await a).toBe(1);
    await tick();
    expect(started).toHaveLength(2);
    // D asks while read 2 runs: it gets read 3, not 2.
    const d = shared();
    started[1]?.resolve(2);
    expect([await b, await c]).toEqual([2, 2]);
    await tick();
    expect(started).toHaveLength(3);
    started[2]?.resolve(3);
    expect(await d).toBe(3);
    // Nothing running: the next caller starts a read at once.
    const e = shared();
    expect(started).toHaveLength(4);
    started[3]?.resolve(4);
    expect(await e).toBe(4);
  });

  it('a failed read fails only its own callers; those waiting for the next get it', async () => {
    const { started, read } = controlled();
    const shared = coalescedRead(read);
    const a = shared();
    const b = shared();
    started[0]?.reject(new Error('database away'));
    await expect(a).rejects.toThrow('database away');
    await tick();
    expect(started).toHaveLength(2);
    started[1]?.resolve(7);
    expect(await b).toBe(7);
  });
});
