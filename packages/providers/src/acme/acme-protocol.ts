import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import {
  type AcmeAccountClient,
  type AcmeProtocol,
  type AcmeSessionOptions,
  type Dns01Hooks,
  isDomainError,
  type OutboundFailure,
  type OutboundPort,
  outboundFailure,
  outboundReason,
  TimeoutError,
  UnavailableError,
} from '@svc/domain';
import acme from 'acme-client';

/**
 * The ACME protocol is acme-client's (MIT; the issue asks for a maintained library, not our own
 * protocol code). What this module adds around it:
 * - every request acme-client makes (the directory, newNonce, newAccount, newOrder, every
 *   authorization, challenge, finalize and certificate URL, Location headers followed) goes
 *   through the outbound client: the destination policy after resolution, https only (an http
 *   URL is refused before any request), redirects only within the origin (3 at most), a time
 *   limit and a size limit per request, and the system's roots plus acme.extra_ca_file;
 * - a deadline per session (one registration, one issuance): past it, the request in flight
 *   is cut, no other is made, and the session fails with a clear error;
 * - clear errors: acme-client turns a failed connection into a TypeError; the outbound
 *   failure behind it is named instead, in words that map no port ("not reachable");
 * - no retries of its own (the worker's job, or the issuance backoff, tries again).
 */

/** One request to the CA, from its first byte to the last of the answer. */
export const ACME_REQUEST_TIMEOUT_MS = 30_000;
/** Largest answer read from a CA (a directory, an order, a certificate chain). */
export const ACME_MAX_ANSWER_BYTES = 1024 * 1024;
/** Same-origin redirects followed on a GET. */
const ACME_REDIRECTS = 3;

interface AcmeCall {
  outbound: OutboundPort;
  extraCa: string | undefined;
  requestTimeoutMs: number;
  signal: AbortSignal;
  /** The first outbound failure of the session: what acme-client's own error hides. */
  failure?: OutboundFailure | undefined;
}

// Which session a request of acme-client's one, process-wide axios instance belongs to.
const sessions = new AsyncLocalStorage<AcmeCall>();

let installed = false;
/** Routes acme-client's requests made inside a session through the outbound client (installed once per process). */
function routeThroughOutbound(): void {
  if (installed) return;
  installed = true;
  const settings = (acme.axios.defaults as unknown as { acmeSettings?: { retryMaxAttempts?: number } }).acmeSettings;
  if (settings) settings.retryMaxAttempts = 0;
  acme.axios.interceptors.request.use((cfg) => {
    const call = sessions.getStore();
    if (call) cfg.adapter = (config) => sendThrough(call, config as unknown as AxiosLikeConfig) as never;
    return cfg;
  });
}

interface AxiosLikeConfig {
  url?: string;
  method?: string;
  data?: unknown;
  headers?: { toJSON?: () => Record<string, unknown> } & Record<string, unknown>;
  responseType?: string;
  validateStatus?: ((status: number) => boolean) | null;
}

/** axios's adapter contract: an answer, or an error carrying `config` (and `response` for a status validateStatus refused). */
async function sendThrough(call: AcmeCall, config: AxiosLikeConfig): Promise<unknown> {
  const method = (config.method ?? 'get').toUpperCase();
  const rawHeaders = config.headers?.toJSON ? config.headers.toJSON() : (config.headers ?? {});
  const headers = Object.fromEntries(
    Object.entries(rawHeaders).filter((e): e is [string, string | number] => typeof e[1] === 'string' || typeof e[1] === 'number'),
  );
  const body = typeof config.data === 'string' || config.data instanceof Uint8Array ? config.data : undefined;
  let answer: Awaited<ReturnType<OutboundPort['request']>>;
  try {
    answer = await call.outbound.request({
      url: acme.axios.getUri(config as never),
      method,
      headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)])),
      ...(body !== undefined ? { body } : {}),
      httpsOnly: true,
      redirects: method === 'GET' || method === 'HEAD' ? ACME_REDIRECTS : 0,
      timeoutMs: call.requestTimeoutMs,
      maxBytes: ACME_MAX_ANSWER_BYTES,
      extraCa: call.extraCa,
      signal: call.signal,
    });
  } catch (err) {
    call.failure ??= outboundFailure(err);
    throw Object.assign(new Error('the ACME request failed'), { config, code: 'ERR_OUTBOUND' });
  }
  const response = {
    data: config.responseType === 'arraybuffer' ? answer.body : answer.body.toString('utf8'),
    status: answer.status,
    statusText: '',
    headers: answer.headers,
    config,
    request: {},
  };
  if (!config.validateStatus || config.validateStatus(answer.status)) return response;
  throw Object.assign(new Error(`Request failed with status code ${answer.status}`), {
    config,
    response,
    code: answer.status >= 500 ? 'ERR_BAD_RESPONSE' : 'ERR_BAD_REQUEST',
  });
}

/** URLs a directory must name as https (RFC 8555 7.1.1); `meta` holds no endpoint. */
const DIRECTORY_RESOURCES = ['newNonce', 'newAccount', 'newOrder', 'newAuthz', 'revokeCert', 'keyChange', 'renewalInfo'];

/**
 * Runs `work` with an acme-client Client for one account, every request of it through the
 * outbound client, within `deadlineMs`. The directory is read first: an answer that is not a
 * directory, or one naming a resource that is not https, ends the session before any request is
 * made there. An outbound failure becomes an UnavailableError naming the CA and the rule; the
 * deadline a TimeoutError (`signal` tells the work's own waits to stop); anything else (the CA's
 * refusals) is rethrown for the caller to word.
 */
export async function acmeSession<T>(
  o: AcmeSessionOptions,
  work: (client: AcmeAccountClient, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  routeThroughOutbound();
  const controller = new AbortController();
  const call: AcmeCall = {
    outbound: o.outbound,
    extraCa: o.extraCaFile ? readFileSync(o.extraCaFile, 'utf8') : undefined,
    requestTimeoutMs: o.requestTimeoutMs ?? ACME_REQUEST_TIMEOUT_MS,
    signal: controller.signal,
  };
  const seconds = Math.round((o.statedDeadlineMs ?? o.deadlineMs) / 1000);
  const expired = () => new TimeoutError(`gave up after ${seconds} s: the ACME CA (${o.directoryUrl}) did not finish in time`);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(expired());
    }, o.deadlineMs);
  });
  const session = sessions.run(call, async () => {
    await checkDirectory(call, o.directoryUrl);
    const client = new acme.Client({
      directoryUrl: o.directoryUrl,
      accountKey: o.accountKeyPem,
      ...(o.accountUrl ? { accountUrl: o.accountUrl } : {}),
      ...(o.eab ? { externalAccountBinding: { kid: o.eab.kid, hmacKey: o.eab.hmac_key } } : {}),
    });
    return work(accountClient(client), controller.signal);
  });
  try {
    return await Promise.race([session, deadline]);
  } catch (err) {
    if (controller.signal.aborted) throw expired();
    if (isDomainError(err)) throw err;
    if (call.failure) throw new UnavailableError(`the ACME CA (${o.directoryUrl}): ${outboundReason(call.failure)}`, 30);
    throw err;
  } finally {
    clearTimeout(timer);
    controller.abort();
    session.catch(() => {}); // cut off by the deadline: its late failure is the deadline's
  }
}

async function checkDirectory(call: AcmeCall, url: string): Promise<void> {
  let answer: Awaited<ReturnType<OutboundPort['request']>>;
  try {
    answer = await call.outbound.request({
      url,
      httpsOnly: true,
      redirects: ACME_REDIRECTS,
      timeoutMs: call.requestTimeoutMs,
      maxBytes: ACME_MAX_ANSWER_BYTES,
      extraCa: call.extraCa,
      signal: call.signal,
      headers: { accept: 'application/json' },
    });
  } catch (err) {
    call.failure ??= outboundFailure(err);
    throw err;
  }
  if (answer.status !== 200) throw new UnavailableError(`the ACME directory ${url} answered HTTP ${answer.status}`);
  let directory: Record<string, unknown>;
  try {
    directory = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new UnavailableError(`the ACME directory ${url} did not answer a directory (not JSON)`);
  }
  if (typeof directory !== 'object' || directory === null || typeof directory.newNonce !== 'string')
    throw new UnavailableError(`the ACME directory ${url} did not answer a directory (no newNonce)`);
  for (const resource of DIRECTORY_RESOURCES) {
    const value = directory[resource];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !URL.canParse(value) || new URL(value).protocol !== 'https:')
      throw new UnavailableError(`the ACME directory ${url} names ${resource} at a URL that is not https: refused, no request made to it`);
  }
}

/** A new account key: ECDSA P-256, PEM. */
export const newAccountKeyPem = async (): Promise<string> => (await acme.crypto.createPrivateEcdsaKey('P-256')).toString();

/** acme-client's Client as the domain's AcmeAccountClient. */
const accountClient = (client: acme.Client): AcmeAccountClient => ({
  createAccount: (opts) => client.createAccount(opts),
  getAccountUrl: () => client.getAccountUrl(),
  orderCertificate: (domains, dns) => orderCertificate(client, domains, dns),
});

/**
 * Orders a certificate for `domains` over DNS-01 (acme-client's auto(): order, authorizations,
 * challenges, finalize, download). Our own pre-check of the challenge is the `publish` wait at
 * the authoritative servers, so acme-client's own (a recursive lookup) is skipped. The key is a
 * new ECDSA P-256 key per order; the chain comes back leaf first.
 */
export async function orderCertificate(
  client: acme.Client,
  domains: readonly string[],
  dns: Dns01Hooks,
): Promise<{ chainPem: string; keyPem: string }> {
  const key = await acme.crypto.createPrivateEcdsaKey('P-256');
  const [, csr] = await acme.crypto.createCsr({ altNames: [...domains] }, key);
  const published = new Set<string>();
  const chainPem = await client.auto({
    csr,
    termsOfServiceAgreed: true,
    challengePriority: ['dns-01'],
    skipChallengeVerification: true,
    challengeCreateFn: async (authz, challenge, value) => {
      if (challenge.type !== 'dns-01') throw new Error(`the CA offers no dns-01 challenge for ${authz.identifier.value}`);
      const fqdn = `_acme-challenge.${authz.identifier.value}`;
      published.add(`${fqdn} ${value}`);
      await dns.publish(fqdn, value);
    },
    challengeRemoveFn: async (authz, _challenge, value) => {
      const fqdn = `_acme-challenge.${authz.identifier.value}`;
      if (published.delete(`${fqdn} ${value}`)) await dns.unpublish(fqdn, value);
    },
  });
  return { chainPem, keyPem: key.toString() };
}

/** The ACME protocol the domain takes (DomainDeps.vendors.acme). */
export const acmeProtocol: AcmeProtocol = { session: acmeSession, newAccountKeyPem };
