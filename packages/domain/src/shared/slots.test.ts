import { describe, expect, it } from 'vitest';
import { isDomainError } from '../errors.ts';
import { createSlots } from './slots.ts';

const tick = () => new Promise((r) => setImmediate(r));

describe('createSlots: at most N at once, the rest in arrival order', () => {
  it('never runs more than the concurrency, and runs the waiting in order', async () => {
    const slots = createSlots(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const releases: Array<() => void> = [];
    const jobs = [1, 2, 3, 4, 5].map((n) =>
      slots.run(async () => {
        running++;
        peak = Math.max(peak, running);
        order.push(n);
        await new Promise<void>((r) => releases.push(r));
        running--;
      }),
    );
    await tick();
    expect(order).toEqual([1, 2]);
    while (releases.length) {
      releases.shift()?.();
      await tick();
      await tick();
    }
    await Promise.all(jobs);
    expect(order).toEqual([1, 2, 3, 4, 5]);
    expect(peak).toBe(2);
  });

  it('a failing job frees its slot', async () => {
    const slots = createSlots(1);
    await expect(slots.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run(async () => 'next')).toBe('next');
  });

  it('beyond maxQueue waiting, refuses at once with an unavailable error', async () => {
    const slots = createSlots(1, { maxQueue: 1, busyMessage: 'busy' });
    let release: () => void = () => {};
    const held = slots.run(
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    const queued = slots.run(async () => 'queued');
    const refused = await slots.run(async () => 'never').catch((e: unknown) => e);
    expect(isDomainError(refused) && refused.type).toBe('unavailable');
    release();
    await held;
    expect(await queued).toBe('queued');
  });
});
