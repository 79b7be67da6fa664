import type { OutboundPort } from '../../shared/outbound.ts';

/**
 * What DNS-01 asks of a DNS provider, whatever its kind: add one TXT value to a name and
 * remove that one value again (never the whole set: the apex and the wildcard authorization of
 * one name share `_acme-challenge.<name>` and run at once), and tell whether a value is visible
 * at the zone's own authoritative servers (the CA's resolver asks them). Its clients (RFC 2136,
 * Cloudflare, Route 53, DigitalOcean) are vendor clients in @svc/providers.
 */
export interface DnsProviderPort {
  readonly kind: string;
  addTxt(fqdn: string, value: string): Promise<void>;
  removeTxt(fqdn: string, value: string): Promise<void>;
  isVisible(fqdn: string, value: string): Promise<boolean>;
}

/** TTL of the challenge records: short, so a retried challenge is not served an old value for long. */
export const CHALLENGE_TTL_SECONDS = 60;

/**
 * What a port needs besides its credentials: the clock, the outbound client (every API call and
 * DNS exchange under the destination policy), and (tests) where the zones' name servers are reached.
 */
export interface DnsProviderDeps {
  now: () => Date;
  outbound: Pick<OutboundPort, 'request' | 'pin'>;
  /** The API's origin (`http://127.0.0.1:4567` in tests); the provider's own otherwise. */
  apiBase?: string | undefined;
  /** The port the zone's name servers answer on; 53 otherwise. */
  nameserverPort?: number | undefined;
  /** A name server's host name to an address; node:dns lookup otherwise. */
  resolveHost?: ((host: string) => Promise<string>) | undefined;
}

/** Builds the port of a stored DNS provider from its kind and opened credentials (@svc/providers `dnsProviderPort`). */
export type DnsAdapterFactory = (kind: string, credentials: Readonly<Record<string, string>>, deps: DnsProviderDeps) => DnsProviderPort;
