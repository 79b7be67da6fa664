import { type OutboundAnswer, type OutboundRequest, outboundRequest, type RequestDeps } from './request.ts';

/** What a library's own HTTP code calls (openid-client's customFetch, Stripe's fetch client): fetch's shape. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Limits of a fetch-shaped client; the call's own signal adds to them. */
export interface FetchDefaults {
  timeoutMs?: number;
  maxBytes?: number;
  httpsOnly?: boolean;
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * The outbound client with fetch's shape, for libraries that take a fetch: same policy, pinning
 * and limits as outboundRequest; redirects are never followed (the 3xx is the answer, as with
 * redirect: 'manual'); the answer is read whole (bounded) before the Response is made. Failures
 * look like fetch's (a TypeError, the OutboundError as its cause), so libraries handle them as
 * they handle a network error.
 */
export function outboundFetch(deps: RequestDeps, defaults: FetchDefaults = {}): FetchLike {
  return async (input, init = {}) => {
    const request = input instanceof Request ? input : undefined;
    const url = request ? request.url : String(input);
    const headers = new Headers(init.headers ?? request?.headers);
    const body = await bodyOf(init.body ?? (request?.body ? await request.arrayBuffer() : undefined));
    const req: OutboundRequest = {
      url,
      method: init.method ?? request?.method ?? 'GET',
      headers: Object.fromEntries(headers.entries()),
      ...(body !== undefined ? { body } : {}),
      ...defaults,
      signal: init.signal ?? request?.signal ?? undefined,
    };
    let answer: OutboundAnswer;
    try {
      answer = await outboundRequest(deps, req);
    } catch (err) {
      // As fetch fails: the caller's abort reason, else a TypeError whose cause says why.
      if (req.signal?.aborted) throw req.signal.reason;
      throw new TypeError('fetch failed', { cause: err });
    }
    const response = new Response(NULL_BODY.has(answer.status) ? null : new Uint8Array(answer.body), {
      status: answer.status,
      headers: answer.headers,
    });
    Object.defineProperty(response, 'url', { value: answer.url });
    return response;
  };
}

async function bodyOf(body: RequestInit['body'] | ArrayBuffer | undefined): Promise<string | Uint8Array | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return new Uint8Array(await new Response(body as RequestInit['body']).arrayBuffer());
}
