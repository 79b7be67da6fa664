import { type FetchDefaults, type FetchLike, outboundFetch } from './fetch.ts';
import { type OutboundAnswer, type OutboundRequest, outboundRequest } from './request.ts';
import { type DestinationPolicy, type HostLookup, type PinnedAddress, pinDestination } from './resolve.ts';

export interface OutboundClientOptions {
  /** The policy in force now (read per call: the owner may change it at any time). */
  policy: () => DestinationPolicy | Promise<DestinationPolicy>;
  /** A host's addresses; the system resolver by default (tests give a resolver stand-in). */
  lookup?: HostLookup | undefined;
  userAgent?: string;
}

/** The one way the server connects where an admin (or the configuration) told it to. */
export interface OutboundClient {
  request(req: OutboundRequest): Promise<OutboundAnswer>;
  /** fetch's shape over request, for libraries that take a fetch. */
  fetch(defaults?: FetchDefaults): FetchLike;
  /** The checked address to connect to, for protocols other than HTTP (DNS over TCP and UDP). */
  pin(host: string): Promise<PinnedAddress>;
}

export function createOutboundClient(o: OutboundClientOptions): OutboundClient {
  const deps = { policy: o.policy, lookup: o.lookup, userAgent: o.userAgent ?? 'svc-control-plane' };
  return {
    request: (req) => outboundRequest(deps, req),
    fetch: (defaults) => outboundFetch(deps, defaults),
    pin: async (host) => pinDestination(host, await o.policy(), o.lookup),
  };
}
