import { isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';

/**
 * The caller's address. Behind a trusted proxy (http.trust_proxy), the rightmost
 * X-Forwarded-For entry: the one our proxy appended. Entries to its left were written by the
 * caller and would let anyone pick their own rate-limit key.
 */
export function clientIp(c: Context, trustProxy: boolean): string | null {
  if (trustProxy) {
    const last = c.req.header('x-forwarded-for')?.split(',').pop()?.trim();
    if (last && isIP(last)) return last;
  }
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null;
  }
}
