import { findUnstorableText, isStorableText, TEXT_RULE } from '@svc/domain';
import type { Context, MiddlewareHandler } from 'hono';
import { tryDecode } from 'hono/utils/url';
import { problemResponse } from './problem.ts';

/**
 * The text rule (domain shared/text.ts) at the HTTP edge: every text the apps take from a
 * request (path params, query keys and values, the headers read as data, JSON bodies keys
 * included) is checked before any handler, so a NUL or an unpaired surrogate is a 400 naming
 * the field (`path.id`, `query.email`, `header.user-agent`, `name`) and never reaches a
 * statement (PostgreSQL 22021 / 22P05 / 22P02 were 500s).
 */

/** Headers whose values the apps keep or match as data (sessions and audit keep the User-Agent). */
const DATA_HEADERS = ['user-agent'] as const;

const refuse = (c: Context, where: string, field: string) =>
  problemResponse(c, 'validation', `the request ${where} is invalid`, { [field]: TEXT_RULE });

// Hono decodes params and queries with this (a sequence it cannot decode stays as it was), so
// the check sees exactly the strings the handlers would.
const decode = (s: string): string => (s.includes('%') ? tryDecode(s, decodeURIComponent) : s);

/** The route that will answer: the last matched handler of this method (the middleware match first). */
function routePattern(c: Context): string | undefined {
  const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
  const routes = c.req.matchedRoutes;
  for (let i = routes.length - 1; i >= 0; i--) {
    const r = routes[i];
    if (r && r.method === method) return r.path;
  }
  return undefined;
}

function unstorablePathParam(c: Context, rawPath: string): string | null {
  const segments = rawPath.split('/');
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as string;
    if (!seg.includes('%') || isStorableText(decode(seg))) continue;
    const pattern = routePattern(c)?.split('/')[i];
    const name = pattern?.startsWith(':') ? pattern.slice(1).replace(/\{.*$/, '') : undefined;
    return name ? `path.${name}` : 'path';
  }
  return null;
}

function unstorableQuery(rawQuery: string): string | null {
  for (const pair of rawQuery.split('&')) {
    if (!pair.includes('%')) continue;
    const eq = pair.indexOf('=');
    const key = decode((eq === -1 ? pair : pair.slice(0, eq)).replaceAll('+', ' '));
    if (!isStorableText(key)) return 'query';
    if (eq !== -1 && !isStorableText(decode(pair.slice(eq + 1).replaceAll('+', ' ')))) return `query.${key}`;
  }
  return null;
}

/**
 * Root middleware: path, query and data headers. A NUL can only arrive percent-encoded (the
 * HTTP parser refuses raw control bytes; the URL parser encodes them) and a lone surrogate
 * not at all (its UTF-8 form does not decode), so a URL without `%` is skipped unread.
 */
export const textRuleOnUrlAndHeaders: MiddlewareHandler = async (c, next) => {
  const url = c.req.url;
  if (url.includes('%')) {
    const start = url.indexOf('/', url.indexOf('://') + 3);
    const q = url.indexOf('?', start);
    const rawPath = q === -1 ? url.slice(start) : url.slice(start, q);
    const bad = unstorablePathParam(c, rawPath);
    if (bad) return refuse(c, 'path', bad);
    if (q !== -1) {
      const hash = url.indexOf('#', q);
      const badQuery = unstorableQuery(hash === -1 ? url.slice(q + 1) : url.slice(q + 1, hash));
      if (badQuery) return refuse(c, 'query', badQuery);
    }
  }
  for (const name of DATA_HEADERS) {
    const value = c.req.header(name);
    if (value !== undefined && !isStorableText(value)) return refuse(c, 'header', `header.${name}`);
  }
  await next();
};

const hasBody = (c: Context): boolean => Number(c.req.header('content-length') ?? 0) > 0 || c.req.header('transfer-encoding') !== undefined;

/**
 * Route middleware for JSON bodies (after auth and the media type check, before zod): the
 * bytes must be UTF-8 without a byte-order mark, and every key and string value must pass the
 * text rule. The decoded text is left in Hono's body cache, so the validator parses it
 * without reading or decoding the body again.
 */
export const textRuleOnJsonBody: MiddlewareHandler = async (c, next) => {
  if (!hasBody(c)) return next();
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return problemResponse(c, 'bad-request', 'the request body starts with a byte-order mark; send UTF-8 JSON without one');
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return problemResponse(c, 'bad-request', 'the request body is not valid UTF-8');
  }
  // Hono's json() reads the cached text (typed loosely; the cache holds promises).
  (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text);
  // Valid UTF-8 holds no surrogate, and JSON refuses raw control characters in strings: a NUL
  // or a lone surrogate can only come from a \u escape, so a body without one is not parsed here.
  if (text.includes('\\u')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return next(); // the validator answers malformed-json
    }
    const bad = findUnstorableText(parsed);
    if (bad) return refuse(c, 'body', bad);
  }
  await next();
};
