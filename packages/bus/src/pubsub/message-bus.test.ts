import { randomBytes } from 'node:crypto';
import type { MessageBus } from '@svc/domain';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryBus } from './memory-bus.ts';
import { createRedisBus } from './redis-bus.ts';

/** One behavioural suite for every bus: what the gateway and the admin API rely on. */
const redisUrl = process.env.REDIS_URL;
const connections: Redis[] = [];
afterAll(async () => {
  for (const r of connections) await r.quit().catch(() => r.disconnect());
});

const buses: Array<{ name: string; skip: boolean; create: () => [MessageBus, MessageBus] }> = [
  {
    name: 'memory bus',
    skip: false,
    create: () => {
      const bus = createMemoryBus();
      return [bus, bus];
    },
  },
  {
    name: 'Redis bus (two processes: separate connections, one prefix)',
    skip: !redisUrl,
    create: () => {
      const prefix = `svc-test:bus:${randomBytes(6).toString('hex')}:`;
      const make = () => {
        const pub = new Redis(redisUrl as string, { maxRetriesPerRequest: 3 });
        const sub = new Redis(redisUrl as string, { maxRetriesPerRequest: null });
        connections.push(pub, sub);
        return createRedisBus(pub, sub, prefix);
      };
      return [make(), make()];
    },
  },
];

const next = (bus: MessageBus, topic: string, timeoutMs = 2000) =>
  new Promise<unknown>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nothing on ${topic} within ${timeoutMs} ms`)), timeoutMs);
    void bus.subscribe(topic, (m) => {
      clearTimeout(timer);
      resolve(m);
    });
  });

const settle = () => new Promise((r) => setTimeout(r, 100));

for (const { name, skip, create } of buses) {
  describe(name, () => {
    const test = it.skipIf(skip);

    test('a message published after subscribe() resolved reaches the subscriber, as a copy', async () => {
      const [a, b] = create();
      const got: unknown[] = [];
      await b.subscribe('t', (m) => got.push(m));
      const payload = { ids: ['n1', 'n2'], nested: { x: 1 } };
      await a.publish('t', payload);
      await settle();
      expect(got).toEqual([payload]);
      expect(got[0]).not.toBe(payload);
    });

    test('every subscriber of a topic gets each message; other topics get nothing', async () => {
      const [a, b] = create();
      const one: unknown[] = [];
      const two: unknown[] = [];
      const other: unknown[] = [];
      await b.subscribe('fan', (m) => one.push(m));
      await a.subscribe('fan', (m) => two.push(m));
      await b.subscribe('elsewhere', (m) => other.push(m));
      await a.publish('fan', 1);
      await a.publish('fan', 2);
      await settle();
      expect(one).toEqual([1, 2]);
      expect(two).toEqual([1, 2]);
      expect(other).toEqual([]);
    });

    test('after unsubscribe nothing more arrives, and the other subscribers keep theirs', async () => {
      const [a, b] = create();
      const gone: unknown[] = [];
      const kept: unknown[] = [];
      const off = await b.subscribe('u', (m) => gone.push(m));
      await b.subscribe('u', (m) => kept.push(m));
      await a.publish('u', 'before');
      await settle();
      await off();
      await a.publish('u', 'after');
      await settle();
      expect(gone).toEqual(['before']);
      expect(kept).toEqual(['before', 'after']);
    });

    test('a throwing handler does not stop delivery to the next one', async () => {
      const [a, b] = create();
      await b.subscribe('boom', () => {
        throw new Error('consumer bug');
      });
      const received = next(b, 'boom');
      await settle();
      await a.publish('boom', { ok: true });
      expect(await received).toEqual({ ok: true });
    });
  });
}
