import { type DnsProviderDeps, type OutboundPort, outboundFailure, outboundReason, redact, UnavailableError } from '@svc/domain';

/**
 * What the adapters of the hosted DNS APIs (Cloudflare, Route 53, DigitalOcean) share: how an
 * API is called (through the outbound client: the destination policy, a time limit, no
 * redirects, the answer read up to a size limit), how what a
 * provider said becomes an error message (printable, bounded, never a secret), and the walk up
 * a name's parents to the zone the account holds.
 */

/** The clock, the outbound client, and the seams the tests use: a stand-in API, a name server on a high port. */
/** What the hosted APIs' clients take (the domain's DnsProviderDeps). */
export type HostedDnsDeps = DnsProviderDeps;

/** Each call is given up after this long. */
export const DNS_API_TIMEOUT_MS = 10_000;
/** An answer larger than this is broken or hostile (the largest we read is one page of records). */
export const DNS_API_MAX_BYTES = 1024 * 1024;

export interface DnsApiRequest {
  /** The provider's name in messages ("Cloudflare"). */
  provider: string;
  /** What the call is for, in messages ("add TXT _acme-challenge.example.com"). */
  step: string;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** Values that must never appear in a message. */
  secrets: readonly string[];
}

export interface DnsApiAnswer {
  status: number;
  text: string;
}

/** A credential the kind requires; its absence is a provider that cannot be used, named. */
export function requiredCredential(credentials: Readonly<Record<string, string>>, kind: string, key: string): string {
  const v = credentials[key];
  if (!v) throw new UnavailableError(`the ${kind} DNS provider is not configured: ${key} is not set`);
  return v;
}

/** Something a provider said, as it may go into a message: printable, bounded, no secret. */
export const providerText = (text: string, secrets: readonly string[], max = 300): string =>
  redact(text.slice(0, 4 * max).replace(/[^\x20-\x7e]/g, '?'), secrets).slice(0, max);

/**
 * One call. It never throws anything but UnavailableError: refused by the destination policy,
 * unreachable (one reason whatever the connection did: the log has the detail), an answer over
 * the limit. Any status comes back (the caller reads the provider's refusal).
 */
export async function callDnsApi(outbound: Pick<OutboundPort, 'request'>, req: DnsApiRequest): Promise<DnsApiAnswer> {
  try {
    const res = await outbound.request({
      url: req.url,
      method: req.method,
      timeoutMs: DNS_API_TIMEOUT_MS,
      maxBytes: DNS_API_MAX_BYTES,
      headers: req.headers,
      ...(req.body !== undefined ? { body: req.body } : {}),
    });
    return { status: res.status, text: res.body.toString('utf8') };
  } catch (err) {
    const failure = outboundFailure(err);
    const why = failure ? outboundReason(failure) : 'the call failed';
    throw new UnavailableError(providerText(`${req.provider} (${req.step}): ${why}`, req.secrets), 30);
  }
}

/**
 * A JSON API behind a bearer token (Cloudflare, DigitalOcean): one call of `method` on `path`
 * under `base`, a JSON body when given, the token never in a message.
 */
export function bearerJsonApi(outbound: Pick<OutboundPort, 'request'>, api: { provider: string; base: string; token: string }) {
  const secrets = [api.token];
  return (step: string, method: DnsApiRequest['method'], path: string, json?: unknown): Promise<DnsApiAnswer> =>
    callDnsApi(outbound, {
      provider: api.provider,
      step,
      method,
      url: `${api.base}${path}`,
      headers: {
        accept: 'application/json',
        authorization: `Bearer ${api.token}`,
        ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: json !== undefined ? JSON.stringify(json) : undefined,
      secrets,
    });
}

/** The provider answered, but refused or said something we cannot use: its words, bounded. */
export function refusedBy(provider: string, step: string, status: number, said: string, secrets: readonly string[]): UnavailableError {
  const tail = said ? `: ${said}` : '';
  return new UnavailableError(
    providerText(`${provider} refused to ${step} (HTTP ${status})${tail}`, secrets, 400),
    status >= 500 || status === 429 ? 30 : undefined,
  );
}

/** JSON, or undefined when the answer is not JSON (a proxy's HTML page, a truncated body). */
export function jsonOf(text: string): unknown {
  try {
    return text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** A name as the adapters compare it: lower case, no trailing dot. */
export function dnsName(fqdn: string): string {
  const name = fqdn.replace(/\.$/, '').toLowerCase();
  const labels = name.split('.');
  if (name.length > 253 || labels.some((l) => !/^[a-z0-9_-]{1,63}$/.test(l)))
    throw new UnavailableError(`not a domain name: ${providerText(JSON.stringify(fqdn), [], 80)}`);
  return name;
}

/**
 * `name` and its parents, most specific first, down to two labels (no provider holds a TLD).
 * A name whose first label starts with `_` (`_acme-challenge.…`) is not a host name and no
 * provider holds a zone of that name (some refuse to be asked): not a candidate.
 */
export function zoneCandidates(name: string): string[] {
  const labels = name.split('.');
  const out: string[] = [];
  for (let i = 0; i < labels.length - 1; i++) if (!labels[i]?.startsWith('_')) out.push(labels.slice(i).join('.'));
  return out;
}

/**
 * The zone of `name`: the first candidate (from `name` up) that `lookup` knows. Answers are kept
 * in `cache` (one port instance: one check, one order), so the many calls of one challenge ask
 * once; a failed lookup is not kept.
 */
export async function findZone<Z>(
  name: string,
  cache: Map<string, Promise<Z | null>>,
  lookup: (candidate: string) => Promise<Z | null>,
  notFound: () => Error,
): Promise<Z> {
  for (const candidate of zoneCandidates(name)) {
    let answer = cache.get(candidate);
    if (!answer) {
      answer = lookup(candidate);
      cache.set(candidate, answer);
      answer.catch(() => cache.delete(candidate));
    }
    const zone = await answer;
    if (zone) return zone;
  }
  throw notFound();
}

/** A TXT value as a provider may show it: `"v"` and `v` are one value. */
export const unquoted = (s: string): string => (s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s);

/** The object members we read out of a provider's JSON, typed loosely and checked where used. */
export const asRecord = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const asString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
