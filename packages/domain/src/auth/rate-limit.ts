import { isIPv4, isIPv6 } from 'node:net';
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

export type RateLimitBucket = 'login' | 'refresh' | 'setup' | 'enroll' | 'magic_link' | 'register' | 'oauth';

export interface RateLimits {
  per_ip: RateLimitWindow;
  per_subject: RateLimitWindow;
}

/**
 * The key an address is counted under: an IPv4 address as it is (an IPv4-mapped IPv6 one
 * too), an IPv6 address by its /64 prefix, since one host is routinely handed a whole /64 and
 * would otherwise have 2^64 budgets. Anything else is kept as it is; no address is null.
 */
export function addressKey(ip: string | null | undefined): string | null {
  if (!ip) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1] as string;
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail] = ip.toLowerCase().split('%')[0]?.split('::') ?? [];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (a.b.c.d) is two groups; only the first four groups matter here.
  const rightGroups = right.flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const groups =
    tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - rightGroups.length)).fill('0'), ...rightGroups];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}

/** One sliding-window budget: refused with RateLimitedError (429 with Retry-After) when spent. */
export async function spendBudget(deps: { rateLimiter: RateLimitStore; clock: Clock }, key: string, w: RateLimitWindow): Promise<void> {
  const r = await deps.rateLimiter.hit(key, w.limit, w.window_seconds * 1000, deps.clock.now().getTime());
  if (!r.allowed) throw new RateLimitedError(Math.max(1, Math.ceil(r.retryAfterMs / 1000)));
}

/**
 * Spec 5.10: refresh, setup and enroll are limited per address (see addressKey) and per
 * subject. Admin sign-in has budgets of its own (admin-login.ts) and uses only the address one here.
 */
export async function enforceRateLimit(
  deps: { rateLimiter: RateLimitStore; clock: Clock },
  bucket: RateLimitBucket,
  limits: RateLimits,
  keys: { ip?: string | null | undefined; subject?: string | null | undefined },
): Promise<void> {
  const address = addressKey(keys.ip);
  if (address) await spendBudget(deps, `rl:${bucket}:ip:${address}`, limits.per_ip);
  if (keys.subject) await spendBudget(deps, `rl:${bucket}:sub:${keys.subject}`, limits.per_subject);
}
