import type { RateLimitResult, RateLimitStore } from '@svc/domain';

/** Sliding-window log in this process's memory (all-in-one mode). */
export function createMemoryRateLimitStore(): RateLimitStore {
  const hits = new Map<string, { times: number[]; windowMs: number }>();
  let sweptAt = 0;

  function sweep(nowMs: number) {
    // Drop keys whose newest hit left its window, so an address scan cannot grow memory forever.
    if (nowMs - sweptAt < 60_000) return;
    sweptAt = nowMs;
    for (const [key, entry] of hits) {
      const newest = entry.times[entry.times.length - 1] ?? 0;
      if (newest <= nowMs - entry.windowMs) hits.delete(key);
    }
  }

  return {
    async hit(key, limit, windowMs, nowMs): Promise<RateLimitResult> {
      sweep(nowMs);
      let entry = hits.get(key);
      if (!entry) {
        entry = { times: [], windowMs };
        hits.set(key, entry);
      }
      entry.windowMs = windowMs;
      const cutoff = nowMs - windowMs;
      let drop = 0;
      while (drop < entry.times.length && (entry.times[drop] as number) <= cutoff) drop++;
      if (drop) entry.times.splice(0, drop);
      if (entry.times.length < limit) {
        entry.times.push(nowMs);
        return { allowed: true, retryAfterMs: 0 };
      }
      return { allowed: false, retryAfterMs: (entry.times[0] as number) + windowMs - nowMs };
    },
  };
}
