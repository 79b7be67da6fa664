import { isDatabaseUnavailable } from '@svc/db';
import { isDomainError, isInvalidTextError } from '@svc/domain';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from 'pino';
import { problemResponse } from './problem.ts';
import { redactPath } from './redact.ts';

/** The one place an error becomes an HTTP response. */
export function mapError(err: unknown, c: Context, log: Logger): Response {
  if (isDomainError(err)) {
    const headers: Record<string, string> = {};
    const retry = (err as { retryAfterSeconds?: number }).retryAfterSeconds;
    if (retry !== undefined) headers['retry-after'] = String(retry);
    if (err.type === 'unauthenticated') headers['www-authenticate'] = 'Bearer';
    const slug = err.type === 'not-found' && err.message === 'route not found' ? 'route-not-found' : err.type;
    const detail = slug === 'route-not-found' ? `no route for ${c.req.method} ${c.req.path}` : err.message;
    return problemResponse(c, slug, detail, err.errors ?? {}, { headers, extra: err.extra ?? {} });
  }
  if (err instanceof HTTPException) {
    if (err.status === 400 && err.message.startsWith('Malformed JSON')) {
      return problemResponse(c, 'malformed-json', 'the request body is not valid JSON');
    }
    if (err.status === 413) return problemResponse(c, 'payload-too-large', 'the request body is too large');
    if (err.status === 401) return problemResponse(c, 'unauthenticated', err.message || 'authentication required');
    if (err.status === 400) return problemResponse(c, 'bad-request', err.message || 'bad request');
  }
  const where = { method: c.req.method, path: redactPath(c.req.path) };
  if (isInvalidTextError(err)) {
    // The text rule runs before every handler (request-text.ts); reaching here means an input
    // path skipped it. Still the caller's input, so a 400, and a warning to find the path.
    log.warn({ err, ...where }, 'the database refused text that skipped the text rule');
    return problemResponse(c, 'bad-request', 'the request holds text that cannot be stored');
  }
  if (isDatabaseUnavailable(err)) {
    // The database is down or restarting: nothing was written (a unit of work rolls back
    // whole), and the same request succeeds once it is back. 503, not a 500 with a stack.
    log.warn({ err: { message: (err as Error).message, code: (err as { code?: unknown }).code }, ...where }, 'database unavailable');
    return problemResponse(c, 'unavailable', 'the database is not reachable; try again shortly', {}, { headers: { 'retry-after': '5' } });
  }
  log.error({ err, ...where }, 'unhandled error');
  return problemResponse(c, 'internal', 'an unexpected error occurred; it has been logged');
}
