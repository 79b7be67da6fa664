import type { JobQueue, MessageBus, RateLimitStore } from '@svc/domain';
import { Redis } from 'ioredis';
import { createBullJobQueue } from './jobs/bullmq-jobs.ts';
import { createMemoryJobQueue } from './jobs/memory-jobs.ts';
import { createMemoryBus } from './pubsub/memory-bus.ts';
import { createRedisBus } from './pubsub/redis-bus.ts';
import { createMemoryRateLimitStore } from './rate-limit/memory-store.ts';
import { createRedisRateLimitStore } from './rate-limit/redis-store.ts';

export interface SharedStateAdapters {
  kind: 'memory' | 'redis';
  rateLimiter: RateLimitStore;
  /** Publish/subscribe between the processes of one installation. */
  bus: MessageBus;
  /** Background jobs: in this process, or BullMQ over Redis. */
  jobs: JobQueue;
  close(): Promise<void>;
}

/**
 * State that replicas must share (rate-limit windows, the message bus that carries node
 * changes, stream hand-overs and agent commands): Redis when a URL is configured, this
 * process's memory otherwise.
 */
export async function createSharedState(opts: {
  redisUrl?: string | undefined;
  keyPrefix?: string;
  onJobFailure?: (name: string, err: unknown) => void;
}): Promise<SharedStateAdapters> {
  const onFailure = opts.onJobFailure ? { onFailure: opts.onJobFailure } : {};
  if (!opts.redisUrl) {
    const jobs = createMemoryJobQueue(onFailure);
    return { kind: 'memory', rateLimiter: createMemoryRateLimitStore(), bus: createMemoryBus(), jobs, close: () => jobs.close() };
  }
  const prefix = opts.keyPrefix ?? 'svc:';
  const redis = new Redis(opts.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 3 });
  await redis.connect();
  // Subscriptions need a connection of their own (a subscribed connection takes no other commands).
  const subscriber = redis.duplicate({ lazyConnect: true, maxRetriesPerRequest: null });
  try {
    await subscriber.connect();
  } catch (err) {
    redis.disconnect();
    throw err;
  }
  const jobs = createBullJobQueue(redis, prefix, onFailure);
  return {
    kind: 'redis',
    rateLimiter: createRedisRateLimitStore(redis, prefix),
    bus: createRedisBus(redis, subscriber, prefix),
    jobs,
    close: async () => {
      await jobs.close().catch(() => {});
      await subscriber.quit().catch(() => subscriber.disconnect());
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
