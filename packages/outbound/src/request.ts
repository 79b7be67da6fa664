import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import { isOutboundError, OutboundError } from './errors.ts';
import { type DestinationPolicy, type HostLookup, pinDestination } from './resolve.ts';

export interface OutboundRequest {
  url: string | URL;
  method?: string;
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array;
  /** The whole exchange (resolution, connection, TLS, answer) within this; default 10 s. */
  timeoutMs?: number;
  /** Answers larger than this are refused (`too-large`); default 1 MiB. */
  maxBytes?: number;
  /** Keep the first maxBytes of a larger answer instead of refusing it (an excerpt is all the caller reads). */
  truncate?: boolean;
  /**
   * Redirects followed (GET and HEAD only, same origin only); default 0: a 3xx is the answer.
   * Above 0, a redirect to another origin or one too many is a `redirect` failure.
   */
  redirects?: number;
  /** Refuse anything but https (`not-https`), before any request is made. */
  httpsOnly?: boolean;
  /** CA certificates (PEM) trusted besides the system's. */
  extraCa?: string | undefined;
  /** The caller giving up (a job's deadline): `aborted`. */
  signal?: AbortSignal | undefined;
}

export interface OutboundAnswer {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered (after redirects). */
  url: string;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_BYTES = 1024 * 1024;

export interface RequestDeps {
  policy: () => DestinationPolicy | Promise<DestinationPolicy>;
  lookup?: HostLookup | undefined;
  userAgent: string;
}

/**
 * One HTTP exchange to a destination an admin named: the URL checked (http or https, https when
 * asked), the host resolved once and checked against the policy, the connection made to that
 * address (Host and TLS server name stay the name), a time limit on the whole exchange, the
 * answer read up to a size limit, redirects refused or followed within the origin.
 */
export async function outboundRequest(deps: RequestDeps, req: OutboundRequest): Promise<OutboundAnswer> {
  const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
  const method = (req.method ?? 'GET').toUpperCase();
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    throw new OutboundError('refused', 'not a URL');
  }
  const origin = url.origin;
  for (let redirects = 0; ; redirects++) {
    const answer = await exchange(deps, req, url, method, signal, timeoutMs);
    const location = answer.headers.location;
    const follow = (req.redirects ?? 0) > 0 && answer.status >= 300 && answer.status < 400 && location !== undefined;
    if (!follow) return answer;
    if (method !== 'GET' && method !== 'HEAD') throw new OutboundError('redirect', `a redirect of a ${method}`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new OutboundError('redirect', 'a redirect to an invalid URL');
    }
    if (next.protocol !== 'https:' && req.httpsOnly) throw new OutboundError('not-https', `a redirect to ${next.protocol}`);
    if (next.origin !== origin) throw new OutboundError('redirect', 'a redirect to another origin');
    if (redirects + 1 > (req.redirects ?? 0)) throw new OutboundError('redirect', 'too many redirects');
    url = next;
  }
}

async function exchange(
  deps: RequestDeps,
  req: OutboundRequest,
  url: URL,
  method: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<OutboundAnswer> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('not-https', `a ${url.protocol} URL`);
  if (req.httpsOnly && url.protocol !== 'https:') throw new OutboundError('not-https', 'an http URL');
  if (url.username || url.password) throw new OutboundError('refused', 'a URL with credentials');
  const stopped = () => signal.reason?.name === 'TimeoutError' && !req.signal?.aborted;
  const abortedError = () =>
    stopped()
      ? new OutboundError('unreachable', `no answer within ${timeoutMs / 1000} s`, undefined, true)
      : new OutboundError('aborted', 'the caller gave up');
  if (signal.aborted) throw abortedError();
  const pinned = await untilAborted(pinDestination(url.hostname, await deps.policy(), deps.lookup), signal, abortedError);
  const https = url.protocol === 'https:';
  const headers: Record<string, string> = { 'user-agent': deps.userAgent, ...lowerCased(req.headers), host: url.host };
  if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
  const name = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const options: RequestOptions & { servername?: string; ca?: string[] } = {
    host: pinned.address,
    family: pinned.family,
    port: url.port || (https ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    method,
    headers,
    agent: false,
    signal,
    ...(https ? { servername: name.includes(':') || /^[\d.]+$/.test(name) ? '' : name } : {}),
    ...(https && req.extraCa ? { ca: [...rootCertificates, req.extraCa] } : {}),
  };
  const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
  return new Promise<OutboundAnswer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const fail = (err: unknown) => {
      if (isOutboundError(err)) reject(err);
      else if (signal.aborted) reject(abortedError());
      else reject(new OutboundError('unreachable', (err as { code?: string })?.code ?? (err as Error)?.message ?? String(err)));
    };
    const onAnswer = (res: IncomingMessage) => {
      const done = () =>
        resolve({ status: res.statusCode ?? 0, headers: joined(res.headers), body: Buffer.concat(chunks), url: url.toString() });
      const declared = Number(res.headers['content-length'] ?? '0');
      if (declared > maxBytes && !req.truncate) {
        res.destroy();
        return fail(new OutboundError('too-large', `an answer of ${declared} bytes`));
      }
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          res.destroy();
          if (!req.truncate) return fail(new OutboundError('too-large', `an answer over ${maxBytes} bytes`));
          chunks.push(chunk.subarray(0, chunk.length - (size - maxBytes)));
          return done();
        }
        chunks.push(chunk);
      });
      res.on('error', fail);
      res.on('end', done);
    };
    const r = (https ? httpsRequest : httpRequest)(options, onAnswer);
    r.on('error', fail);
    r.end(req.body);
  });
}

/** A lookup cannot be cancelled; the caller stops waiting for it. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, error: () => Error): Promise<T> {
  if (signal.aborted) return Promise.reject(error());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(error());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

const lowerCased = (h: Readonly<Record<string, string>> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(h ?? {}).map(([k, v]) => [k.toLowerCase(), v]));

const joined = (h: IncomingMessage['headers']): Record<string, string> =>
  Object.fromEntries(
    Object.entries(h)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v as string)]),
  );
