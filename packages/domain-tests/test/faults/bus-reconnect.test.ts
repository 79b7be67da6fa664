import { createSharedState, type SharedStateAdapters } from '@svc/bus';
import { createBusInvalidatedCache, systemClock } from '@svc/domain';
import { type PrivateRedis, privateServicesAvailable, startPrivateRedis, until } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 18.4: a Redis restart loses what was published while it was down (pub/sub keeps
 * nothing). Caches emptied by bus messages (subscription links, settings, admins' access)
 * must not keep serving what they read before it: they start over once the bus is back.
 * On a redis-server of this file's own, restarted empty (SHUTDOWN NOSAVE).
 */
const available = Boolean(process.env.REDIS_URL) && (await privateServicesAvailable());

let redis: PrivateRedis;
let shared: SharedStateAdapters;

describe.skipIf(!available)('the Redis bus after a Redis restart', () => {
  beforeAll(async () => {
    redis = await startPrivateRedis();
    shared = await createSharedState({ redisUrl: redis.url, keyPrefix: 'bus-reconnect:' });
  });
  afterAll(async () => {
    await shared?.close();
    await redis?.destroy();
  });

  it('a bus-invalidated cache drops what it read before the outage once the bus is back (a change announced meanwhile was lost)', async () => {
    const cache = createBusInvalidatedCache<string>(
      { bus: shared.bus, clock: systemClock },
      // An hour of age: only a message, or the reconnect, empties it within the test.
      { topics: ['things.changed'], maxAgeMs: 3_600_000, maxEntries: 10 },
    );
    let version = 'first';
    const read = () => cache.get('k', async () => version);
    expect(await read()).toBe('first');
    // The subscription is live once a message empties the cache.
    version = 'before';
    await until(
      'a message empties the cache',
      async () => {
        await shared.bus.publish('things.changed', {});
        return (await read()) === 'before';
      },
      10_000,
    );
    version = 'changed while Redis was down';
    expect(await read()).toBe('before');
    // The change's message went out while Redis was down: nobody received it.
    await redis.stop('shutdown');
    await redis.start();
    await until('the cache reads again after the reconnect', async () => (await read()) === version, 20_000);
    await cache.stop();
  });

  it('messages published after the restart reach the subscribers again (ioredis resubscribes)', async () => {
    const seen: unknown[] = [];
    const unsubscribe = await shared.bus.subscribe('after.restart', (m) => seen.push(m));
    await redis.stop('kill9');
    await redis.start();
    await until(
      'a message published after the restart delivered',
      async () => {
        await shared.bus.publish('after.restart', { n: 1 }).catch(() => {});
        return seen.length > 0;
      },
      20_000,
    );
    expect(seen[0]).toEqual({ n: 1 });
    await unsubscribe();
  });
});
