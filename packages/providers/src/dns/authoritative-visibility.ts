import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { OutboundPort } from '@svc/domain';

/**
 * Whether a TXT value is visible where the CA will look: at the zone's own authoritative name
 * servers (as the provider's API names them), each asked directly, never through a caching
 * resolver (which may hold the answer from before the change for its TTL). The CA may ask any
 * of them, so the value is visible only when every one answers it. A name server's address is
 * the outbound client's (the destination policy: a zone delegated to a metadata or, unless
 * allowed, a private address is never asked, and reads as not visible).
 */

export interface NameserverReach {
  /** Resolves and checks each name server's address. */
  outbound: Pick<OutboundPort, 'pin'>;
  /** The port the name servers answer on; 53 otherwise. */
  nameserverPort?: number | undefined;
  /** A name server's host name to an address (tests); the outbound client's resolution otherwise. The address is checked either way. */
  resolveHost?: ((host: string) => Promise<string>) | undefined;
}

/** More name servers than this is not a zone's delegation but a broken or hostile answer. */
export const MAX_NAMESERVERS = 16;

const LABEL = /^[A-Za-z0-9_-]{1,63}$/;

/** A host name we may ask (the API's answer is not trusted to be one). */
export function isHostName(host: string): boolean {
  const name = host.replace(/\.$/, '');
  return name.length > 0 && name.length <= 253 && name.split('.').every((l) => LABEL.test(l));
}

/** Whether `value` is among the TXT values of `fqdn` at the server `ip`:`port`. */
async function answersAt(ip: string, port: number, fqdn: string, value: string): Promise<boolean> {
  const r = new Resolver({ timeout: 2000, tries: 2 });
  r.setServers([`${isIP(ip) === 6 ? `[${ip}]` : ip}:${port}`]);
  try {
    return (await r.resolveTxt(fqdn)).some((chunks) => chunks.join('') === value);
  } catch {
    // NXDOMAIN, no TXT yet, no answer: not visible there (yet).
    return false;
  }
}

/**
 * Asks each of `nameservers` for the TXT values of `fqdn`; true only when all of them answer
 * `value`. No name server, one that is not a host name, cannot be resolved or does not answer:
 * false (the CA might be sent there).
 */
export async function visibleAtNameservers(
  nameservers: readonly string[],
  fqdn: string,
  value: string,
  reach: NameserverReach,
): Promise<boolean> {
  if (nameservers.length === 0 || nameservers.length > MAX_NAMESERVERS || !nameservers.every(isHostName)) return false;
  const port = reach.nameserverPort ?? 53;
  // The outbound client resolves IPv4 first: a server without an IPv6 route would never reach an AAAA.
  const resolveHost = reach.resolveHost ?? (async (host: string) => (await reach.outbound.pin(host)).address);
  const answers = await Promise.all(
    nameservers.map(async (ns) => {
      let ip: string;
      try {
        ip = (await reach.outbound.pin(await resolveHost(ns.replace(/\.$/, '')))).address;
      } catch {
        return false;
      }
      return isIP(ip) !== 0 && answersAt(ip, port, fqdn, value);
    }),
  );
  return answers.every(Boolean);
}
