import { describe, expect, it } from 'vitest';
import { denialsReader, type NodeDenials } from './device-denials.ts';

// The fleet's refused addresses are read once for many streams, but never with a read that
// started before a stream asked (it could predate a denial the stream must get).

function controlled() {
  const started: Array<{ nodes: string[]; resolve: (v: number) => void; reject: (e: Error) => void }> = [];
  const load = (nodes: string[]) =>
    new Promise<(id: string) => NodeDenials>((resolve, reject) => {
      started.push({
        nodes,
        resolve: (n) => resolve((id) => [{ subscription_id: `${id}#${n}`, addresses: [] }]),
        reject,
      });
    });
  return { started, read: denialsReader(load) };
}

const tick = () => new Promise((r) => setImmediate(r));
const readNo = async (p: Promise<NodeDenials>) => Number((await p)[0]?.subscription_id.split('#')[1]);

describe('denialsReader: each caller gets a read that started after it asked', () => {
  it('callers while a read runs share the next one, started when it settles; nobody gets the read that was running when they asked', async () => {
    const { started, read } = controlled();
    const a = read('n1');
    await tick();
    expect(started).toHaveLength(1);
    const b = read('n2');
    const c = read('n1');
    await tick();
    // B and C asked after read 1 began: they wait for read 2, which has not started yet.
    expect(started).toHaveLength(1);
    started[0]?.resolve(1);
    expect(await readNo(a)).toBe(1);
    await tick();
    expect(started).toHaveLength(2);
    expect(started[1]?.nodes.sort()).toEqual(['n1', 'n2']);
    // D asks while read 2 runs: it gets read 3, not 2.
    const d = read('n2');
    started[1]?.resolve(2);
    expect([await readNo(b), await readNo(c)]).toEqual([2, 2]);
    await tick();
    expect(started).toHaveLength(3);
    started[2]?.resolve(3);
    expect(await readNo(d)).toBe(3);
    // Nothing running: the next caller's read starts at once (in the next turn).
    const e = read('n3');
    await tick();
    expect(started).toHaveLength(4);
    started[3]?.resolve(4);
    expect(await readNo(e)).toBe(4);
  });

  it('a failed read fails only its own callers; those waiting for the next get it', async () => {
    const { started, read } = controlled();
    const a = read('n1');
    await tick();
    const b = read('n1');
    started[0]?.reject(new Error('database away'));
    await expect(a).rejects.toThrow('database away');
    await tick();
    expect(started).toHaveLength(2);
    started[1]?.resolve(7);
    expect(await readNo(b)).toBe(7);
  });
});
