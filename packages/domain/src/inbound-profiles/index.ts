// Use cases of this feature, exported for every surface.
import { PROTOCOLS, SHADOWSOCKS_METHODS, SNIFF_DESTS, VLESS_FLOWS } from './profile.ts';
import { NETWORKS, REALITY_FINGERPRINTS, SECURITIES, TLS_VERSIONS, XHTTP_MODES } from './stream.ts';

export { CreateInboundProfileInput, createInboundProfile } from './create-inbound-profile.ts';
export { deleteInboundProfile } from './delete-inbound-profile.ts';
export type { InboundProfileView, Sniffing as InboundProfileSniffing } from './profile.ts';
export { getInboundProfile, type InboundProfileFilter, listInboundProfiles } from './read-inbound-profiles.ts';
export type { StoredStream as InboundProfileStream } from './stream.ts';
export { UpdateInboundProfileInput, updateInboundProfile } from './update-inbound-profile.ts';

/** The value lists of an inbound profile's enums, for the surfaces' schemas. */
export const INBOUND_PROFILE_VALUES = {
  protocols: PROTOCOLS,
  networks: NETWORKS,
  securities: SECURITIES,
  xhttpModes: XHTTP_MODES,
  tlsVersions: TLS_VERSIONS,
  realityFingerprints: REALITY_FINGERPRINTS,
  vlessFlows: VLESS_FLOWS,
  shadowsocksMethods: SHADOWSOCKS_METHODS,
  sniffDests: SNIFF_DESTS,
} as const;
