/**
 * The port of the outbound client (packages/outbound, built by the runtime): every connection
 * the server makes where an admin or the configuration pointed it (webhooks, ACME directories
 * and every URL they name, DNS providers, OAuth providers, payment APIs) goes through it, under
 * one destination policy (docs/threat-model.md, "Outbound calls"). The domain names what it
 * needs; it imports no HTTP client.
 */

export interface OutboundRequest {
  url: string | URL;
  method?: string;
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array;
  /** The whole exchange; default 10 s. */
  timeoutMs?: number;
  /** Largest answer read; default 1 MiB; larger ones fail (`too-large`) unless `truncate`. */
  maxBytes?: number;
  truncate?: boolean;
  /** Same-origin redirects followed (GET, HEAD); default 0: a 3xx is the answer. */
  redirects?: number;
  httpsOnly?: boolean;
  /** CA certificates (PEM) trusted besides the system's. */
  extraCa?: string | undefined;
  signal?: AbortSignal | undefined;
}

export interface OutboundAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  url: string;
}

export type OutboundFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface OutboundPort {
  request(req: OutboundRequest): Promise<OutboundAnswer>;
  /** fetch's shape, for libraries that take one (openid-client, Stripe); redirects never followed. */
  fetch(defaults?: { timeoutMs?: number; maxBytes?: number; httpsOnly?: boolean }): OutboundFetch;
  /** The checked address of a host, for protocols other than HTTP (RFC 2136 over TCP and UDP). */
  pin(host: string): Promise<{ address: string; family: 4 | 6 }>;
}

/** Why a call got no answer (packages/outbound, errors.ts). */
export type OutboundFailureReason = 'refused' | 'not-https' | 'unreachable' | 'too-large' | 'redirect' | 'aborted';

export interface OutboundFailure extends Error {
  name: 'OutboundError';
  reason: OutboundFailureReason;
  /** Connection-level detail: for the log only, never an API answer. */
  detail: string;
  addressClass?: string | undefined;
  /** No answer in time: for destinations the configuration names only (a payment API's 504), never in text about an admin's. */
  timedOut?: boolean;
}

/** The outbound failure behind `err`, also when a library wrapped it (cause chain). */
export function outboundFailure(err: unknown): OutboundFailure | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    if ((e as { name?: unknown }).name === 'OutboundError' && 'reason' in e) return e as OutboundFailure;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Where the owner allows private networks; named in refusals so an operator knows what to change. */
export const PRIVATE_NETWORKS_SETTING = 'allow_private_networks (PATCH /api/v1/settings/outbound)';

/**
 * What an API answer may say about a failed call: which rule refused it, or "not reachable" for
 * anything that happened before an answer (refused, reset, closed, silent, TLS, DNS: which of
 * them maps ports of internal hosts, so the log keeps it and the answer does not).
 */
export function outboundReason(f: Pick<OutboundFailure, 'reason' | 'addressClass'>): string {
  switch (f.reason) {
    case 'refused':
      return f.addressClass === 'loopback' || f.addressClass === 'private'
        ? `the destination is refused: a ${f.addressClass} address, allowed only when the owner turns on ${PRIVATE_NETWORKS_SETTING}`
        : `the destination is refused: ${f.addressClass ? `a ${f.addressClass} address` : 'not allowed'}, never allowed`;
    case 'not-https':
      return 'the destination is refused: only https is allowed';
    case 'unreachable':
      return 'not reachable';
    case 'too-large':
      return 'the answer was larger than allowed';
    case 'redirect':
      return 'a redirect was refused (to another origin, or too many)';
    case 'aborted':
      return 'given up: the deadline passed';
  }
}
