import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { type DomainDeps, isStorableText } from '@svc/domain';
import { type HistogramChild, statusClass } from '@svc/metrics';
import { acceptsGzip } from './accept-encoding.ts';
import type { AppEnv } from './env.ts';
import type { FastPath, FastRequest, PreparedAnswer } from './fast-path.ts';

const FAST = Symbol('svc.fastPath');

/** Marks a GET route's handler as having a fast path (see fast-path.ts). */
export function withFastPath<H extends object>(handler: H, fast: FastPath): H {
  (handler as H & { [FAST]?: FastPath })[FAST] = fast;
  return handler;
}

/** The root middlewares of each root app (createApp), which the fast path does what they do for a GET. */
const rootMiddlewares = new WeakMap<object, ReadonlySet<unknown>>();
export function recordRootMiddlewares(app: object, handlers: readonly unknown[]): void {
  rootMiddlewares.set(app, new Set(handlers));
}

export interface FastListener {
  listener: RequestListener;
  /** Requests answered before Hono so far. */
  answered(): number;
}

/**
 * Node's request listener for a root app: a GET a fast path can answer is answered here, all
 * else goes to Hono's listener (`hono`) untouched. Only fast paths whose probe runs through
 * nothing but the root middlewares and their own handler are used (a middleware added on the
 * route later turns its fast path off rather than being skipped).
 */
export function fastListener(app: OpenAPIHono<AppEnv>, deps: DomainDeps, hono: RequestListener): FastListener {
  const paths = fastPathsOf(app, deps);
  let answered = 0;
  if (paths.length === 0) return { listener: hono, answered: () => 0 };
  // What the requestMetrics middleware records for Hono's answers (request-metrics.ts), by
  // route and status: the series bound once each.
  const durations = new Map<string, Map<number, HistogramChild>>();
  const durationOf = (route: string, status: number): HistogramChild => {
    let byStatus = durations.get(route);
    if (!byStatus) {
      byStatus = new Map();
      durations.set(route, byStatus);
    }
    let child = byStatus.get(status);
    if (!child) {
      child = deps.metrics.httpDuration.child({ route, method: 'GET', status_class: statusClass(status) });
      byStatus.set(status, child);
    }
    return child;
  };
  const send = (res: ServerResponse, answer: PreparedAnswer, givenId: string | undefined, route: string, started: number): void => {
    const head = answer.head.slice();
    head[answer.slot] = requestId(givenId);
    res.writeHead(answer.status, head);
    res.end(answer.body);
    answered++;
    durationOf(route, answer.status).observe((performance.now() - started) / 1000);
  };
  const listener: RequestListener = (req, res) => {
    if (req.method === 'GET') {
      const started = performance.now();
      const fast = fastRequest(req);
      if (fast) {
        for (const { path, route } of paths) {
          const answer = path.answer(fast, deps);
          if (!answer) continue;
          if (answer instanceof Promise) {
            // A read first: its answer when there is one, else Hono from the start (a GET's
            // body is never read, so handing the request over later changes nothing for it).
            answer
              .then(
                (a) => (a ? send(res, a, fast.givenId, route, started) : hono(req, res)),
                () => hono(req, res),
              )
              // Nothing thrown after the read may go unhandled (it would stop the process): the connection is dropped.
              .catch((err: unknown) => {
                deps.log.error({ err, route, request_id: fast.givenId }, 'fast path failed after its read');
                res.destroy();
              });
            return;
          }
          send(res, answer, fast.givenId, route, started);
          return;
        }
      }
    }
    hono(req, res);
  };
  return { listener, answered: () => answered };
}

/** The fast paths in use, each with its route's pattern (the `route` label of its answers). */
function fastPathsOf(app: OpenAPIHono<AppEnv>, deps: DomainDeps): Array<{ path: FastPath; route: string }> {
  const root = rootMiddlewares.get(app);
  if (!root) return [];
  const out: Array<{ path: FastPath; route: string }> = [];
  for (const r of app.routes) {
    const fast = (r.handler as { [FAST]?: FastPath })[FAST];
    if (!fast || r.method !== 'GET' || fast.active?.(deps) === false) continue;
    // What Hono runs for a GET of the probe: each matched [handler, route] in order.
    const [matched] = app.router.match('GET', fast.probe) as unknown as [Array<[[unknown, unknown], unknown]>];
    const handlers = matched.map(([[h]]) => h);
    const own = handlers.filter((h) => !root.has(h));
    if (own.length === 1 && own[0] === r.handler && handlers.at(-1) === r.handler) out.push({ path: fast, route: r.path });
  }
  return out;
}

/**
 * The request as the root app would see it, or null when the fast path leaves it to Hono: the
 * target must be origin-form without `%` (the text rule on URLs reads only those with one;
 * Hono and the URL parser change nothing else in such a path), the Host must be one
 * @hono/node-server accepts, and the headers read (User-Agent, Accept, X-Request-Id) plain
 * values that pass the text rule (request-text.ts).
 */
function fastRequest(req: IncomingMessage): (FastRequest & { givenId: string | undefined }) | null {
  const url = req.url;
  if (url === undefined || url.charCodeAt(0) !== 47 || url.includes('%')) return null;
  const raw = req.rawHeaders;
  let host: string | undefined;
  let userAgent: string | undefined;
  let accept: string | undefined;
  let givenId: string | undefined;
  let encodings: string | undefined;
  let hwid = false;
  let uaCount = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    switch (name.length) {
      case 4:
        if (host === undefined && isName(name, 'host')) host = value;
        break;
      case 6:
        // Repeated, joined with ", " (as Headers and node do).
        if (isName(name, 'accept')) accept = accept === undefined ? value : `${accept}, ${value}`;
        else if (isName(name, 'x-hwid')) hwid = true;
        break;
      case 10:
        if (isName(name, 'user-agent')) {
          uaCount++;
          userAgent = value;
        }
        break;
      case 12:
        if (isName(name, 'x-request-id')) givenId = givenId === undefined ? value : `${givenId}, ${value}`;
        break;
      case 15:
        if (isName(name, 'accept-encoding')) encodings = encodings === undefined ? value : `${encodings}, ${value}`;
        break;
    }
  }
  // Node keeps the first of repeated User-Agents, Hono joins them: such a request goes to Hono.
  if (uaCount > 1 || host === undefined || !hostAccepted(host)) return null;
  if (userAgent !== undefined && (!plain(userAgent) || !isStorableText(userAgent))) return null;
  if (accept !== undefined && !plain(accept)) return null;
  if (givenId !== undefined && !plain(givenId)) return null;
  return { url, userAgent, accept, givenId, hwid, gzip: acceptsGzip(encodings) };
}

const isName = (name: string, lower: string): boolean => name === lower || name.toLowerCase() === lower;

/** No leading or trailing blank (Headers trims those; node already does, this only makes sure). */
function plain(value: string): boolean {
  if (value.length === 0) return true;
  const first = value.charCodeAt(0);
  const last = value.charCodeAt(value.length - 1);
  return first !== 32 && first !== 9 && last !== 32 && last !== 9;
}

/** hono/request-id as createApp uses it: the caller's X-Request-Id when short and plain, else a new UUID. */
function requestId(given: string | undefined): string {
  if (given && given.length <= 255 && !/[^\w\-=]/.test(given)) return given;
  return crypto.randomUUID();
}

const hosts = new Map<string, boolean>();
/**
 * @hono/node-server builds the request URL from the Host header and answers 400 unless the
 * URL's hostname is the Host (less its port). Only names made of plain characters are judged
 * here (memoized, a bounded number); anything else goes to Hono.
 */
function hostAccepted(host: string): boolean {
  let ok = hosts.get(host);
  if (ok === undefined) {
    ok = false;
    if (/^[A-Za-z0-9.\-_[\]:]+$/.test(host)) {
      try {
        const url = new URL(`http://${host}/`);
        ok = url.hostname.length === host.length || url.hostname === host.replace(/:\d+$/, '');
      } catch {
        ok = false;
      }
    }
    if (hosts.size >= 256) hosts.clear();
    hosts.set(host, ok);
  }
  return ok;
}
