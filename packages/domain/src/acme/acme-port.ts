import type { OutboundPort } from '../shared/outbound.ts';

/**
 * The ACME protocol as the domain uses it (registering an account, ordering a certificate over
 * DNS-01). The client is acme-client's, a vendor client in @svc/providers (acme/acme-protocol.ts),
 * handed to the domain as DomainDeps.vendors.acme: every request through the outbound client,
 * a deadline per session, clear errors, no retries of its own.
 */
export interface AcmeProtocol {
  /**
   * Runs `work` with a client for one account, within `deadlineMs`. An outbound failure becomes
   * an UnavailableError naming the CA and the rule; the deadline a TimeoutError (`signal` tells
   * the work's own waits to stop); the CA's refusals are rethrown for the caller to word (caSays).
   */
  session<T>(o: AcmeSessionOptions, work: (client: AcmeAccountClient, signal: AbortSignal) => Promise<T>): Promise<T>;
  /** A new account key: ECDSA P-256, PEM. */
  newAccountKeyPem(): Promise<string>;
}

export interface AcmeSessionOptions {
  outbound: OutboundPort;
  directoryUrl: string;
  accountKeyPem: string;
  accountUrl?: string | undefined;
  eab?: { kid: string; hmac_key: string } | undefined;
  extraCaFile?: string | undefined;
  /** The whole session (a registration, an issuance) gives up after this long. */
  deadlineMs: number;
  /** The job's deadline as its error states it, when the session has only what is left of it; deadlineMs otherwise. */
  statedDeadlineMs?: number | undefined;
  requestTimeoutMs?: number | undefined;
}

/** One account at the CA, within a session. */
export interface AcmeAccountClient {
  /** Registers the key's account (or, with onlyReturnExisting, finds the one the CA has for it). */
  createAccount(opts: { termsOfServiceAgreed?: boolean; contact?: string[]; onlyReturnExisting?: boolean }): Promise<unknown>;
  /** The account's URL, once created or found. */
  getAccountUrl(): string;
  /**
   * Orders a certificate for `domains` over DNS-01 (order, authorizations, challenges,
   * finalize, download) with a new ECDSA P-256 key; the chain comes back leaf first.
   */
  orderCertificate(domains: readonly string[], dns: Dns01Hooks): Promise<{ chainPem: string; keyPem: string }>;
}

/** What DNS-01 needs from the caller: publish one value for one name, and take it away again. */
export interface Dns01Hooks {
  /** Publishes `value` at `_acme-challenge.<name>` and resolves once it is visible where the CA looks. */
  publish(fqdn: string, value: string): Promise<void>;
  /** Removes that one value (the apex and the wildcard of a name publish two at once). */
  unpublish(fqdn: string, value: string): Promise<void>;
}

/** What the CA said, bounded and printable (acme-client's errors carry the ACME problem's detail). */
export const caSays = (err: unknown): string =>
  String((err as Error)?.message ?? err)
    .replace(/[^\x20-\x7e]/g, '?')
    .slice(0, 300);
