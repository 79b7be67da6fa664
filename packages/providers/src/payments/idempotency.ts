import { createHash } from 'node:crypto';

/**
 * The idempotency key sent to a provider: ours as it is when the provider takes it (printable
 * ASCII, not longer than its limit), otherwise its SHA-256 in hex (64 characters), which is
 * as unique and fits every provider we know.
 */
export function providerIdempotencyKey(key: string, max: number): string {
  if (key.length > 0 && key.length <= max && /^[\x21-\x7e]+$/.test(key)) return key;
  return createHash('sha256').update(key, 'utf8').digest('hex').slice(0, max);
}
