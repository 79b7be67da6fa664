import { lookup } from 'node:dns/promises';
import { type AddressClass, classifyAddress, ipLiteral, NEVER_ALLOWED, PRIVATE_CLASSES } from './address.ts';
import { OutboundError } from './errors.ts';

/** The policy's one switch: loopback and private networks (off by default; the owner's setting). */
export interface DestinationPolicy {
  allowPrivateNetworks: boolean;
}

/** A host's addresses: node:dns lookup (the system resolver, /etc/hosts included) unless a test gives its own. */
export type HostLookup = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemLookup: HostLookup = (host) => lookup(host, { all: true, verbatim: true });

/** Whether the policy lets a connection go to an address of this class. */
export const allowedClass = (cls: AddressClass, policy: DestinationPolicy): boolean =>
  !NEVER_ALLOWED.has(cls) && (!PRIVATE_CLASSES.has(cls) || policy.allowPrivateNetworks);

export interface PinnedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * The one address a connection to `host` goes to: the literal itself, or the first address the
 * resolver gives that the policy allows (IPv4 first: a server without an IPv6 route would never
 * reach an AAAA). The caller connects to this address and no other, so a second lookup the
 * name's DNS could answer differently never happens. No allowed address: `refused`, naming the
 * class of the first refused one; no address at all: `unreachable`.
 */
export async function pinDestination(host: string, policy: DestinationPolicy, resolve: HostLookup = systemLookup): Promise<PinnedAddress> {
  const literal = ipLiteral(host);
  let candidates: Array<{ address: string; family: number }>;
  if (literal !== null) candidates = [{ address: literal, family: literal.includes(':') ? 6 : 4 }];
  else {
    try {
      candidates = await resolve(host.replace(/\.$/, ''));
    } catch (err) {
      throw new OutboundError('unreachable', `no address for the host (${(err as { code?: string }).code ?? 'lookup failed'})`);
    }
    candidates = [...candidates].sort((a, b) => a.family - b.family);
  }
  let refused: AddressClass | undefined;
  for (const c of candidates) {
    const normal = ipLiteral(c.address);
    if (normal === null) continue;
    const cls = classifyAddress(normal);
    if (allowedClass(cls, policy)) return { address: normal, family: normal.includes(':') ? 6 : 4 };
    refused ??= cls;
  }
  if (refused) throw new OutboundError('refused', `the destination is a ${refused} address`, refused);
  throw new OutboundError('unreachable', 'no address for the host');
}
