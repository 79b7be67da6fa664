import { randomBytes } from 'node:crypto';
import type { RateLimitStore } from '@svc/domain';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryRateLimitStore } from './memory-store.ts';
import { createRedisRateLimitStore } from './redis-store.ts';

/**
 * Spec 5.10: sign-in, magic-link, register and refresh are limited with a sliding window.
 * One behavioural suite, run against every store; time is the caller's `nowMs`, so nothing
 * here waits for real time to pass.
 */
const SEC = 1000;
const redisUrl = process.env.REDIS_URL;

const connections: Redis[] = [];
afterAll(async () => {
  for (const r of connections) await r.quit().catch(() => r.disconnect());
});

const stores: Array<{ name: string; skip: boolean; create: () => RateLimitStore }> = [
  { name: 'memory store', skip: false, create: () => createMemoryRateLimitStore() },
  {
    name: 'Redis store',
    skip: !redisUrl,
    create: () => {
      const redis = new Redis(redisUrl as string, { maxRetriesPerRequest: 3 });
      connections.push(redis);
      // A fresh prefix per store: suites and parallel runs never share a window.
      return createRedisRateLimitStore(redis, `svc-test:rl:${randomBytes(6).toString('hex')}:`);
    },
  },
];

// Any fixed epoch: the stores must not care how far it is from the real clock.
const T0 = Date.UTC(2030, 0, 1);

for (const { name, skip, create } of stores) {
  describe(name, () => {
    const test = it.skipIf(skip);

    test('allows `limit` hits in the window, then refuses', async () => {
      const store = create();
      for (let i = 0; i < 5; i++) {
        expect(await store.hit('k', 5, 60 * SEC, T0 + i)).toEqual({ allowed: true, retryAfterMs: 0 });
      }
      const refused = await store.hit('k', 5, 60 * SEC, T0 + 10);
      expect(refused.allowed).toBe(false);
    });

    test('a limit of 1 allows exactly one hit per window', async () => {
      const store = create();
      expect((await store.hit('one', 1, 10 * SEC, T0)).allowed).toBe(true);
      expect((await store.hit('one', 1, 10 * SEC, T0)).allowed).toBe(false);
      expect((await store.hit('one', 1, 10 * SEC, T0 + 9_999)).allowed).toBe(false);
      expect((await store.hit('one', 1, 10 * SEC, T0 + 10_001)).allowed).toBe(true);
    });

    test('retryAfterMs is when the oldest counted hit leaves the window', async () => {
      const store = create();
      await store.hit('k', 2, 60 * SEC, T0 + 5 * SEC);
      await store.hit('k', 2, 60 * SEC, T0 + 30 * SEC);
      // Oldest counted hit at 5 s leaves at 65 s.
      expect(await store.hit('k', 2, 60 * SEC, T0 + 40 * SEC)).toEqual({ allowed: false, retryAfterMs: 25 * SEC });
      expect(await store.hit('k', 2, 60 * SEC, T0 + 64 * SEC)).toEqual({ allowed: false, retryAfterMs: 1 * SEC });
      // Waiting exactly retryAfterMs (plus a tick) is enough.
      expect((await store.hit('k', 2, 60 * SEC, T0 + 65 * SEC + 1)).allowed).toBe(true);
    });

    test('the window slides, it is not fixed: hits free up one by one as each leaves the window', async () => {
      const store = create();
      const hit = (atMs: number) => store.hit('slide', 3, 60 * SEC, T0 + atMs);
      expect((await hit(0)).allowed).toBe(true);
      expect((await hit(20 * SEC)).allowed).toBe(true);
      expect((await hit(40 * SEC)).allowed).toBe(true);
      expect(await hit(50 * SEC)).toEqual({ allowed: false, retryAfterMs: 10 * SEC });
      // A fixed 60 s window would reset everything at 60 s; a sliding one frees only the
      // hit from t=0, so exactly one more is allowed.
      expect((await hit(60 * SEC + 1)).allowed).toBe(true);
      const next = await hit(60 * SEC + 2);
      expect(next.allowed).toBe(false);
      // The oldest counted hit is now the one at 20 s.
      expect(next.retryAfterMs).toBe(20 * SEC + 60 * SEC - (60 * SEC + 2));
      expect((await hit(80 * SEC + 1)).allowed).toBe(true);
      expect((await hit(80 * SEC + 2)).allowed).toBe(false);
    });

    test('a hit exactly one window old no longer counts', async () => {
      const store = create();
      await store.hit('edge', 1, 60 * SEC, T0);
      expect((await store.hit('edge', 1, 60 * SEC, T0 + 60 * SEC - 1)).allowed).toBe(false);
      expect((await store.hit('edge', 1, 60 * SEC, T0 + 60 * SEC)).allowed).toBe(true);
    });

    test('refused hits are not recorded: hammering during a lockout does not extend it', async () => {
      const store = create();
      const hit = (atMs: number) => store.hit('hammer', 2, 10 * SEC, T0 + atMs);
      expect((await hit(0)).allowed).toBe(true);
      expect((await hit(1)).allowed).toBe(true);
      for (let t = 1 * SEC; t < 10 * SEC; t += 250) {
        const r = await hit(t);
        expect(r.allowed).toBe(false);
        // Always counted from the first allowed hit, never from the latest refused one.
        expect(r.retryAfterMs).toBe(10 * SEC - t);
      }
      // Both counted hits have left the window: a full allowance is back, not one slot.
      expect((await hit(10 * SEC + 1)).allowed).toBe(true);
      expect((await hit(10 * SEC + 2)).allowed).toBe(true);
      expect((await hit(10 * SEC + 3)).allowed).toBe(false);
    });

    test('keys are independent: one exhausted key does not limit another', async () => {
      const store = create();
      for (let i = 0; i < 3; i++) await store.hit('login:ip:203.0.113.7', 3, 60 * SEC, T0 + i);
      expect((await store.hit('login:ip:203.0.113.7', 3, 60 * SEC, T0 + 10)).allowed).toBe(false);
      expect((await store.hit('login:ip:203.0.113.8', 3, 60 * SEC, T0 + 10)).allowed).toBe(true);
      expect((await store.hit('login:subject:admin:adm_1', 3, 60 * SEC, T0 + 10)).allowed).toBe(true);
      // ...and the other keys' hits did not count against the first.
      expect((await store.hit('login:ip:203.0.113.7', 3, 60 * SEC, T0 + 60 * SEC + 1)).allowed).toBe(true);
    });

    test('hits at the same millisecond each count', async () => {
      const store = create();
      const results = await Promise.all([1, 2, 3, 4].map(() => store.hit('burst', 3, 60 * SEC, T0)));
      expect(results.filter((r) => r.allowed)).toHaveLength(3);
      expect(results.filter((r) => !r.allowed)).toEqual([{ allowed: false, retryAfterMs: 60 * SEC }]);
    });
  });
}

describe('Redis store', () => {
  it.skipIf(!redisUrl)('replicas sharing one Redis share the window (two stores, one prefix)', async () => {
    const prefix = `svc-test:rl:${randomBytes(6).toString('hex')}:`;
    const a = new Redis(redisUrl as string);
    const b = new Redis(redisUrl as string);
    connections.push(a, b);
    const replicaA = createRedisRateLimitStore(a, prefix);
    const replicaB = createRedisRateLimitStore(b, prefix);
    expect((await replicaA.hit('shared', 2, 60 * SEC, T0)).allowed).toBe(true);
    expect((await replicaB.hit('shared', 2, 60 * SEC, T0 + 1)).allowed).toBe(true);
    expect(await replicaA.hit('shared', 2, 60 * SEC, T0 + 2)).toEqual({ allowed: false, retryAfterMs: 60 * SEC - 2 });
    expect((await replicaB.hit('shared', 2, 60 * SEC, T0 + 3)).allowed).toBe(false);
  });
});
