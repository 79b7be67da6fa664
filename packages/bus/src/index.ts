export { createSharedState, type SharedStateAdapters } from './adapters.ts';
export { createBullJobQueue } from './jobs/bullmq-jobs.ts';
export { createMemoryJobQueue, type JobQueueObservers } from './jobs/memory-jobs.ts';
export { createMemoryBus } from './pubsub/memory-bus.ts';
export { createRedisBus } from './pubsub/redis-bus.ts';
export { createMemoryRateLimitStore } from './rate-limit/memory-store.ts';
export { createRedisRateLimitStore } from './rate-limit/redis-store.ts';
