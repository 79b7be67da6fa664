import { randomBytes } from 'node:crypto';
import { type RateLimitResult, type RateLimitStore, UnavailableError } from '@svc/domain';
import type { Redis } from 'ioredis';

// One atomic step per hit: prune what left the window, count, record if allowed, else say
// when the oldest counted hit leaves. Scores are the caller's clock (ms), not Redis TIME, so
// every replica and every test clock agree on the window.
const SCRIPT = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < limit then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
  return {1, 0}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, tonumber(oldest[2]) + window - now}
`;

/** Sliding-window log shared by every replica (split mode). */
export function createRedisRateLimitStore(redis: Redis, prefix = 'svc:'): RateLimitStore {
  redis.defineCommand('svcRateLimitHit', { numberOfKeys: 1, lua: SCRIPT });
  const call = (redis as unknown as { svcRateLimitHit: (...a: Array<string | number>) => Promise<[number, number]> }).svcRateLimitHit.bind(
    redis,
  );
  return {
    async hit(key, limit, windowMs, nowMs): Promise<RateLimitResult> {
      const member = `${nowMs}:${randomBytes(6).toString('base64url')}`;
      let answer: [number, number];
      try {
        answer = await call(`${prefix}${key}`, nowMs, windowMs, limit, member);
      } catch (err) {
        // Redis away (restarting, failing over): the hit cannot be counted, and letting it
        // through uncounted would switch the limit off for as long as Redis is down. 503 with
        // Retry-After, not a 500: the same request succeeds once Redis is back.
        throw Object.assign(new UnavailableError('rate limits cannot be checked right now; try again shortly', 5), { cause: err });
      }
      const [allowed, retry] = answer;
      return { allowed: allowed === 1, retryAfterMs: Math.max(0, Number(retry)) };
    },
  };
}
