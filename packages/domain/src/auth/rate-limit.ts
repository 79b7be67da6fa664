import type { RateLimitWindow } from '@svc/config';
import { RateLimitedError } from '../errors.ts';
import type { Clock } from '../shared/clock.ts';

export interface RateLimitResult {
  allowed: boolean;
  /** When not allowed: milliseconds until the oldest counted hit leaves the window. */
  retryAfterMs: number;
}

/**
 * Sliding-window log: a hit is allowed when fewer than `limit` allowed hits fall inside
 * (now - window, now]; only allowed hits are recorded. Adapters: memory (one process) and
 * Redis (shared by replicas), in packages/bus. `nowMs` comes from the caller's clock.
 */
export interface RateLimitStore {
  hit(key: string, limit: number, windowMs: number, nowMs: number): Promise<RateLimitResult>;
  close?(): Promise<void>;
}

export type RateLimitBucket = 'login' | 'refresh' | 'setup' | 'enroll';

export interface RateLimits {
  per_ip: RateLimitWindow;
  per_subject: RateLimitWindow;
}

/** Spec 5.10: sign-in, refresh (and setup) are limited per IP and per subject. */
export async function enforceRateLimit(
  deps: { rateLimiter: RateLimitStore; clock: Clock },
  bucket: RateLimitBucket,
  limits: RateLimits,
  keys: { ip?: string | null | undefined; subject?: string | null | undefined },
): Promise<void> {
  const now = deps.clock.now().getTime();
  const checks: Array<[string, RateLimitWindow]> = [];
  if (keys.ip) checks.push([`rl:${bucket}:ip:${keys.ip}`, limits.per_ip]);
  if (keys.subject) checks.push([`rl:${bucket}:sub:${keys.subject}`, limits.per_subject]);
  for (const [key, w] of checks) {
    const r = await deps.rateLimiter.hit(key, w.limit, w.window_seconds * 1000, now);
    if (!r.allowed) throw new RateLimitedError(Math.max(1, Math.ceil(r.retryAfterMs / 1000)));
  }
}
