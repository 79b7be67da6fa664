export { createSharedState, type SharedStateAdapters } from './adapters.ts';
export { createMemoryRateLimitStore } from './rate-limit/memory-store.ts';
export { createRedisRateLimitStore } from './rate-limit/redis-store.ts';
