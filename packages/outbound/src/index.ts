// The outbound client: every connection the server makes where an admin or the configuration
// pointed it, under one destination policy (docs/threat-model.md, "Outbound calls").

export * from './address.ts';
export * from './client.ts';
export * from './errors.ts';
export type { FetchDefaults, FetchLike } from './fetch.ts';
export { DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_MS, type OutboundAnswer, type OutboundRequest } from './request.ts';
export { allowedClass, type DestinationPolicy, type HostLookup, type PinnedAddress, pinDestination, systemLookup } from './resolve.ts';
