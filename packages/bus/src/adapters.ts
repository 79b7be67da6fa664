import type { RateLimitStore } from '@svc/domain';
import { Redis } from 'ioredis';
import { createMemoryRateLimitStore } from './rate-limit/memory-store.ts';
import { createRedisRateLimitStore } from './rate-limit/redis-store.ts';

export interface SharedStateAdapters {
  kind: 'memory' | 'redis';
  rateLimiter: RateLimitStore;
  close(): Promise<void>;
}

/**
 * State that replicas must share (rate-limit windows now; stream ownership, pub/sub and
 * command replies later): Redis when a URL is configured, this process's memory otherwise.
 */
export async function createSharedState(opts: { redisUrl?: string | undefined; keyPrefix?: string }): Promise<SharedStateAdapters> {
  if (!opts.redisUrl) {
    return { kind: 'memory', rateLimiter: createMemoryRateLimitStore(), close: async () => {} };
  }
  const redis = new Redis(opts.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 3 });
  await redis.connect();
  return {
    kind: 'redis',
    rateLimiter: createRedisRateLimitStore(redis, opts.keyPrefix ?? 'svc:'),
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
