import type { JobQueue, MessageBus, RateLimitStore } from '@svc/domain';
import type { QueueDepth } from '@svc/metrics';
import { Redis } from 'ioredis';
import { createBullJobQueue } from './jobs/bullmq-jobs.ts';
import { createMemoryJobQueue, type JobQueueObservers } from './jobs/memory-jobs.ts';
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
  /** Jobs per queue and state now (BullMQ's counts, or this process's queue): svc_job_queue_depth. */
  jobDepths(): Promise<QueueDepth[]>;
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
  /** What the job queues report: a job given up on, each run's outcome. */
  jobs?: JobQueueObservers;
  /** Redis went away ('lost', once per outage, with the error) or came back ('back'). */
  onRedis?: (event: 'lost' | 'back', err?: unknown) => void;
}): Promise<SharedStateAdapters> {
  const observers = opts.jobs ?? {};
  if (!opts.redisUrl) {
    const jobs = createMemoryJobQueue(observers);
    return {
      kind: 'memory',
      rateLimiter: createMemoryRateLimitStore(),
      bus: createMemoryBus(),
      jobs,
      jobDepths: () => jobs.depths(),
      close: () => jobs.close(),
    };
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
  watchConnection(redis, opts.onRedis);
  // The subscriber's outages are the command connection's: without a listener, ioredis
  // writes each failed reconnect to stderr as an "Unhandled error event".
  subscriber.on('error', () => {});
  const jobs = createBullJobQueue(redis, prefix, observers);
  return {
    kind: 'redis',
    rateLimiter: createRedisRateLimitStore(redis, prefix),
    bus: createRedisBus(redis, subscriber, prefix),
    jobs,
    jobDepths: () => jobs.depths(),
    close: async () => {
      await jobs.close().catch(() => {});
      await subscriber.quit().catch(() => subscriber.disconnect());
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * Reports a Redis outage once ('lost', with the first error) and its end ('back'). ioredis
 * reconnects on its own (every 50 ms more, at most 2 s apart) and resubscribes the bus's
 * channels; commands fail after 3 retries meanwhile. Messages published during the outage are
 * lost: every reader of the bus also re-reads on a timer (the gateway every heartbeat, caches
 * by their age limit).
 */
function watchConnection(redis: Redis, report: ((event: 'lost' | 'back', err?: unknown) => void) | undefined): void {
  let lost = false;
  redis.on('error', (err) => {
    if (lost) return;
    lost = true;
    report?.('lost', err);
  });
  redis.on('ready', () => {
    if (!lost) return;
    lost = false;
    report?.('back');
  });
}
