import type { Context, MiddlewareHandler } from 'hono';
import { problemResponse } from './problem.ts';

const tooLarge = (c: Context, max: number) => problemResponse(c, 'payload-too-large', `the request body exceeds ${max} bytes`);

/**
 * The request body limit, in bytes as received, before anything decodes them. A declared
 * Content-Length over the limit is refused unread (the HTTP parser holds the body to the
 * declared length). A chunked body is read here up to the limit and refused as soon as it
 * passes it; under the limit it is handed on as bytes. (hono/body-limit counted a chunked body
 * while the JSON parser read it, so the parser's error won and the answer was 400
 * malformed-json instead of 413.)
 */
export function limitBody(max: number | ((c: Context) => number), opts: { exempt?: ReadonlySet<string> } = {}): MiddlewareHandler {
  return async (c, next) => {
    // Only requests that can carry a body: touching the body of a GET makes the node adapter
    // build a full WHATWG Request (an AbortSignal and all), a large part of a cheap request.
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    // A route with a limit of its own, applied after it knows who is asking (OWN_BODY_LIMIT).
    if (opts.exempt?.has(c.req.path)) return next();
    const limit = typeof max === 'function' ? max(c) : max;
    const declared = c.req.header('content-length');
    if (declared !== undefined) return Number(declared) > limit ? tooLarge(c, limit) : next();
    if (c.req.header('transfer-encoding') === undefined || !c.req.raw.body) return next();
    const reader = c.req.raw.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        return tooLarge(c, limit);
      }
      chunks.push(value);
    }
    c.req.raw = new Request(c.req.raw, { body: Buffer.concat(chunks) });
    await next();
  };
}

/**
 * POST paths that bound their bodies themselves, after authentication (a larger limit than the
 * global one must not be open to a stranger): the admin's upload of a source store to import.
 */
export const OWN_BODY_LIMIT: ReadonlySet<string> = new Set(['/api/v1/imports']);
