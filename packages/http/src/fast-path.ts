import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { DomainDeps } from '@svc/domain';
import { type ProblemSlug, problemBody } from './problem.ts';

/**
 * A route's answer given on node's request listener, before Hono, when the route can tell at
 * once what its handler would send (GET /sub/{token} from its cache). Everything Hono and the
 * root middlewares would add is added here the same way, so the bytes on the wire are the same
 * but for the request id; every request the fast path is not sure of goes to Hono unchanged.
 */

/** What the fast path hands a route: the parts of a GET it may read (all as Hono would read them). */
export interface FastRequest {
  /** The request target as received: always origin-form, without `%` (anything else goes to Hono). */
  url: string;
  /** The User-Agent header (several are joined with ", ", as Hono reads them); undefined when absent. */
  userAgent: string | undefined;
  accept: string | undefined;
  /** Whether Accept-Encoding takes gzip (acceptsGzip; repeated headers joined with ", ", as Hono reads them). */
  gzip?: boolean;
  /** Whether an x-hwid header came (a client app naming its device: GET /sub/{token} leaves it to the handler). */
  hwid?: boolean;
}

export interface FastPath {
  /** A path of the route, checked at start: on it only the root middlewares and this route's handler may run, else the fast path stays off. */
  probe: string;
  /** Whether to serve at all in this process (checked once, at start). */
  active?: (deps: DomainDeps) => boolean;
  /**
   * The answer the handler would send to this GET: known at once, or a promise of it (a read
   * the handler would make too); undefined, or a promise of undefined or one that fails: Hono
   * answers (and does its own reads again). `deps` are those the root app hands its handlers.
   */
  answer(req: FastRequest, deps: DomainDeps): PreparedAnswer | Promise<PreparedAnswer | undefined> | undefined;
}

/** An answer prepared once to be sent many times: its header list in the order Hono writes it, its body as bytes. */
export interface PreparedAnswer {
  readonly status: number;
  /** Flat name/value list for res.writeHead, Content-Length last; `slot` is the request id's value. */
  readonly head: readonly string[];
  readonly slot: number;
  readonly body: Buffer;
}

const REQUEST_ID_PLACEHOLDER = 'request-id';

/**
 * Prepares an answer as the root app would send it from `c.body(body, status, headers)`: the
 * request id set before the handler (requestId middleware), the handler's headers over it,
 * `nosniff` after it (createApp), in the order undici's Headers iterates them (sorted names,
 * values normalized), then Content-Length (@hono/node-server). Null when node would refuse a
 * header (then the fast path leaves the answer to Hono and its error handling).
 */
export function prepareAnswer(status: number, headers: Readonly<Record<string, string>>, body: Buffer): PreparedAnswer | null {
  const h = new Headers();
  h.set('x-request-id', REQUEST_ID_PLACEHOLDER);
  for (const [k, v] of Object.entries(headers)) h.set(k, v);
  h.set('x-content-type-options', 'nosniff');
  if (!h.has('content-type') || h.has('set-cookie')) return null;
  const head: string[] = [];
  let slot = -1;
  for (const [k, v] of h) {
    try {
      validateHeaderName(k);
      validateHeaderValue(k, v);
    } catch {
      return null;
    }
    if (k === 'x-request-id' && v === REQUEST_ID_PLACEHOLDER) slot = head.length + 1;
    head.push(k, v);
  }
  if (slot === -1) return null;
  head.push('Content-Length', String(body.byteLength));
  return { status, head, slot, body };
}

/** problemResponse(c, slug, detail) prepared for the fast path: the same problem+json bytes and headers. */
export function prepareProblem(slug: ProblemSlug, detail: string): PreparedAnswer | null {
  const body = problemBody(slug, detail);
  return prepareAnswer(body.status, { 'content-type': 'application/problem+json' }, Buffer.from(JSON.stringify(body), 'utf8'));
}
