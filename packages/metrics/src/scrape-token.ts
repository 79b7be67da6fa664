import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether an Authorization header carries the scrape token (`Bearer <token>`). Both sides are
 * hashed first, so the comparison is constant-time whatever their lengths.
 */
export function scrapeTokenMatches(authorization: string | undefined, token: string): boolean {
  if (!authorization) return false;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  if (!m) return false;
  const given = createHash('sha256')
    .update(m[1] as string)
    .digest();
  const wanted = createHash('sha256').update(token).digest();
  return timingSafeEqual(given, wanted);
}
