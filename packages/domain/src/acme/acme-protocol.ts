import { readFileSync } from 'node:fs';
import { Agent, get } from 'node:https';
import { rootCertificates } from 'node:tls';
import acme from 'acme-client';
import { UnavailableError } from '../errors.ts';

/**
 * The ACME protocol is acme-client's (MIT; the issue asks for a maintained library, not our own
 * protocol code). What this module adds around it:
 * - trust: the system's roots plus acme.extra_ca_file for every ACME request (acme-client has
 *   one axios instance per process: an interceptor puts our agent on each request);
 * - clear errors: acme-client turns a TLS or connection failure into an unhelpful TypeError
 *   after a minute of retries, so the directory is fetched by us first and its failure named;
 * - no retries of its own on an unreachable CA (the worker's job is retried instead).
 */

let agent: Agent | undefined;
let agentCa: string | undefined;

/** The HTTPS agent for ACME requests: the system's roots and the extra CA file, if any. */
export function acmeAgent(extraCaFile: string | undefined): Agent {
  const key = extraCaFile ?? '';
  if (agent && agentCa === key) return agent;
  const extra = extraCaFile ? readFileSync(extraCaFile, 'utf8') : '';
  agent = new Agent({ ca: extra ? [...rootCertificates, extra] : [...rootCertificates], keepAlive: true });
  agentCa = key;
  return agent;
}

let intercepting = false;
/** Makes acme-client's requests go through `current()`, the agent of the latest client made (installed once per process). */
function useAgent(current: () => Agent | undefined): void {
  if (intercepting) return;
  intercepting = true;
  const settings = (acme.axios.defaults as unknown as { acmeSettings?: { retryMaxAttempts?: number } }).acmeSettings;
  if (settings) settings.retryMaxAttempts = 0;
  acme.axios.interceptors.request.use((cfg) => {
    // A request that already carries an agent (set by whoever made it) keeps it.
    const a = current();
    if (a && !cfg.httpsAgent) cfg.httpsAgent = a;
    return cfg;
  });
}

/** GETs the directory with our agent: a TLS, DNS or connection failure becomes an UnavailableError naming it. */
export function fetchDirectory(url: string, a: Agent, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: a, timeout: timeoutMs }, (res) => {
      res.resume();
      if (res.statusCode === 200) resolve();
      else reject(new UnavailableError(`the ACME directory ${url} answered HTTP ${res.statusCode}`));
    });
    req.on('timeout', () => req.destroy(new Error('no answer in time')));
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(new UnavailableError(`the ACME directory ${url} cannot be reached: ${err.code ?? err.message}`)),
    );
  });
}

export interface AcmeClientOptions {
  directoryUrl: string;
  accountKeyPem: string;
  accountUrl?: string | undefined;
  eab?: { kid: string; hmac_key: string } | undefined;
  extraCaFile?: string | undefined;
}

/** An acme-client Client for one account, after the directory answered through our agent. */
export async function acmeClient(o: AcmeClientOptions): Promise<acme.Client> {
  const a = acmeAgent(o.extraCaFile);
  // The agent of this client's trust (the latest made): not the first caller's, whose CA file may be another's.
  useAgent(() => agent);
  await fetchDirectory(o.directoryUrl, a);
  return new acme.Client({
    directoryUrl: o.directoryUrl,
    accountKey: o.accountKeyPem,
    ...(o.accountUrl ? { accountUrl: o.accountUrl } : {}),
    ...(o.eab ? { externalAccountBinding: { kid: o.eab.kid, hmacKey: o.eab.hmac_key } } : {}),
  });
}

/** A new account key: ECDSA P-256, PEM. */
export const newAccountKeyPem = async (): Promise<string> => (await acme.crypto.createPrivateEcdsaKey('P-256')).toString();

/** What the CA said, bounded and printable (acme-client's errors carry the ACME problem's detail). */
export const caSays = (err: unknown): string =>
  String((err as Error)?.message ?? err)
    .replace(/[^\x20-\x7e]/g, '?')
    .slice(0, 300);

/** What DNS-01 needs from the caller: publish one value for one name, and take it away again. */
export interface Dns01Hooks {
  /** Publishes `value` at `_acme-challenge.<name>` and resolves once it is visible where the CA looks. */
  publish(fqdn: string, value: string): Promise<void>;
  /** Removes that one value (the apex and the wildcard of a name publish two at once). */
  unpublish(fqdn: string, value: string): Promise<void>;
}

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
