import { createMemoryBus } from '@svc/bus';
import { createBusInvalidatedCache, type MessageBus } from '@svc/domain';
import { createFakeClock } from '@svc/testkit';
import { describe, expect, it } from 'vitest';

const settle = () => new Promise((r) => setImmediate(r));

/** The memory bus, counting the subscriptions still live. */
function countingBus(): MessageBus & { live(): number } {
  const bus = createMemoryBus();
  let live = 0;
  return {
    publish: (topic, message) => bus.publish(topic, message),
    async subscribe(topic, handler) {
      const unsubscribe = await bus.subscribe(topic, handler);
      live++;
      return async () => {
        live--;
        await unsubscribe();
      };
    },
    live: () => live,
  };
}

/** A load that counts its calls and answers with the call number. */
function counter() {
  let calls = 0;
  return {
    load: async () => ++calls,
    calls: () => calls,
  };
}

function setup(opts: { maxAgeMs?: number; maxEntries?: number; keep?: (v: number) => boolean } = {}) {
  const bus = countingBus();
  const clock = createFakeClock(new Date('2026-01-01T00:00:00Z'));
  const cache = createBusInvalidatedCache<number>(
    { bus, clock },
    { topics: ['a.changed', 'b.changed'], maxAgeMs: opts.maxAgeMs ?? 1000, maxEntries: opts.maxEntries ?? 10, keep: opts.keep },
  );
  return { bus, clock, cache };
}

describe('createBusInvalidatedCache', () => {
  it('serves a value until it is older than the max age by the injected clock', async () => {
    const { clock, cache } = setup({ maxAgeMs: 1000 });
    await settle();
    const c = counter();
    expect(await cache.get('k', c.load)).toBe(1);
    clock.advance(1000);
    expect(await cache.get('k', c.load)).toBe(1);
    clock.advance(1);
    expect(await cache.get('k', c.load)).toBe(2);
  });

  it('a message on any of its topics empties it; other topics leave it alone', async () => {
    const { bus, cache } = setup();
    await settle();
    const c = counter();
    await cache.get('k', c.load);
    await bus.publish('other.topic', {});
    await settle();
    expect(await cache.get('k', c.load)).toBe(1);
    await bus.publish('b.changed', {});
    await settle();
    expect(await cache.get('k', c.load)).toBe(2);
  });

  it('what was read before its subscriptions were live is dropped once they are', async () => {
    let subscribed!: () => void;
    const live = new Promise<void>((r) => {
      subscribed = r;
    });
    const memory = createMemoryBus();
    const slowBus: MessageBus = {
      publish: memory.publish,
      subscribe: async (topic, handler) => {
        await live;
        return memory.subscribe(topic, handler);
      },
    };
    const cache = createBusInvalidatedCache<number>(
      { bus: slowBus, clock: createFakeClock() },
      { topics: ['a.changed'], maxAgeMs: 1000, maxEntries: 10 },
    );
    const c = counter();
    await cache.get('k', c.load);
    expect(await cache.get('k', c.load)).toBe(1);
    subscribed();
    await settle();
    expect(await cache.get('k', c.load)).toBe(2);
    await cache.stop();
  });

  it('after stop its subscriptions are gone and every read loads', async () => {
    const { bus, cache } = setup();
    await settle();
    expect(bus.live()).toBe(2);
    await cache.stop();
    expect(bus.live()).toBe(0);
    const c = counter();
    await cache.get('k', c.load);
    expect(await cache.get('k', c.load)).toBe(2);
  });

  it('a failed read is not cached: the next caller reads again', async () => {
    const { cache } = setup();
    await settle();
    const failing = async (): Promise<number> => {
      throw new Error('database down');
    };
    await expect(cache.get('k', failing)).rejects.toThrow('database down');
    expect(await cache.get('k', async () => 7)).toBe(7);
    expect(await cache.get('k', async () => 8)).toBe(7);
  });

  it('callers share a read in progress', async () => {
    const { cache } = setup();
    await settle();
    const c = counter();
    expect(await Promise.all([cache.get('k', c.load), cache.get('k', c.load)])).toEqual([1, 1]);
    expect(c.calls()).toBe(1);
  });

  it('a value it is told not to keep is read again next time', async () => {
    const { cache } = setup({ keep: (v) => v !== 1 });
    await settle();
    const c = counter();
    expect(await cache.get('k', c.load)).toBe(1);
    expect(await cache.get('k', c.load)).toBe(2);
    expect(await cache.get('k', c.load)).toBe(2);
  });

  it('past the max entry count it starts over', async () => {
    const { cache } = setup({ maxEntries: 2 });
    await settle();
    const c = counter();
    await cache.get('a', c.load);
    await cache.get('b', c.load);
    expect(await cache.get('a', c.load)).toBe(1);
    await cache.get('c', c.load);
    expect(await cache.get('a', c.load)).toBe(4);
  });

  it('peek hands back what get would, without waiting and without loading: nothing before the read settles, after a message, past the age, for a value not kept, a failed read or after stop', async () => {
    const { bus, clock, cache } = setup({ maxAgeMs: 1000, keep: (v) => v !== 13 });
    await settle();
    const c = counter();
    expect(cache.peek('k')).toBeUndefined();
    expect(c.calls()).toBe(0);
    const reading = cache.get('k', c.load);
    // Still running: get would make its caller wait.
    expect(cache.peek('k')).toBeUndefined();
    expect(await reading).toBe(1);
    expect(cache.peek('k')).toBe(1);
    clock.advance(1000);
    expect(cache.peek('k')).toBe(1);
    clock.advance(1);
    expect(cache.peek('k')).toBeUndefined();
    expect(c.calls()).toBe(1);
    expect(await cache.get('k', c.load)).toBe(2);
    expect(cache.peek('k')).toBe(2);
    // A clock that went back: get reads again, so peek has nothing.
    clock.advance(-5000);
    expect(cache.peek('k')).toBeUndefined();
    clock.advance(5000);
    expect(cache.peek('k')).toBe(2);
    await bus.publish('b.changed', {});
    await settle();
    expect(cache.peek('k')).toBeUndefined();
    // Not kept, failed: nothing to peek at.
    expect(await cache.get('u', async () => 13)).toBe(13);
    expect(cache.peek('u')).toBeUndefined();
    await expect(
      cache.get('f', async () => {
        throw new Error('database down');
      }),
    ).rejects.toThrow('database down');
    expect(cache.peek('f')).toBeUndefined();
    expect(await cache.get('k', c.load)).toBe(3);
    expect(cache.peek('k')).toBe(3);
    await cache.stop();
    expect(cache.peek('k')).toBeUndefined();
  });
});
