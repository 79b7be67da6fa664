import type { Protocol } from '@svc/db';

/**
 * What the engine on a node accepts, known from the version its agent reports in Hello
 * (`xray_version`: svc-agent sends the bare version `<engine> version` prints, "25.10.15" for
 * Xray, "4.34.0" for V2Ray). A node's desired state is compiled for these capabilities
 * (packages/desired-state), so a profile can ask for what the newest Xray runs and a node on an
 * older engine still gets a configuration it loads: Debian's v2ray 4.34 refuses the whole file
 * for one sniffing destination it does not know ("unknown protocol: quic").
 *
 * Facts, read in the engines' config builders (XTLS/Xray-core and v2fly/v2ray-core, `infra/conf`):
 * - `quic` in sniffing.destOverride: Xray from 1.5.6 ("Quic sniffer", #1074), V2Ray from 5.0.1;
 *   never in V2Ray 4.
 * - sniffing.routeOnly: Xray from 1.5.1; V2Ray has none (it ignores the key and overrides).
 * - a Shadowsocks inbound without users (`clients: []`): Xray from 1.2.3; V2Ray refuses it
 *   ("Shadowsocks password is not specified"), in 4 and 5.
 * - `bittorrent` in destOverride: no engine (it is a protocol sniffing recognises for routing,
 *   never a destination to override with).
 */
export type EngineFamily = 'xray' | 'v2ray' | 'unknown';
/** Destinations sniffing can override with (SNIFF_DESTS without bittorrent). */
export type SniffOverride = 'http' | 'tls' | 'quic';

export interface EngineCapabilities {
  /** The sniffing.destOverride values the engine accepts. */
  sniffing: readonly SniffOverride[];
  /** sniffing.routeOnly is honoured. */
  route_only: boolean;
  /** A Shadowsocks inbound with no users loads (it then accepts nobody). */
  empty_shadowsocks: boolean;
}

export interface Engine {
  family: EngineFamily;
  /** The version as reported; null before the agent reported one. */
  version: string | null;
  capabilities: EngineCapabilities;
}

type Version = [number, number, number];

const XRAY_FIRST: Record<'quic' | 'route_only' | 'empty_shadowsocks', Version> = {
  quic: [1, 5, 6],
  route_only: [1, 5, 1],
  empty_shadowsocks: [1, 2, 3],
};
const V2RAY_QUIC: Version = [5, 0, 1];

/**
 * What every engine we support accepts: what an engine we cannot name gets. A configuration
 * its engine refuses takes the whole node down (every inbound, not just the new feature), while
 * this costs an Xray node only the quic destination override, and route-only sniffing and
 * Shadowsocks inbounds without users compiled the way every engine runs them (see sniffingFor,
 * engineRunsInbound); nobody connecting notices.
 */
export const COMMON_CAPABILITIES: EngineCapabilities = Object.freeze({
  sniffing: Object.freeze(['http', 'tls'] as SniffOverride[]),
  route_only: false,
  empty_shadowsocks: false,
});

/** Current Xray: everything a profile can ask for. */
export const XRAY_CAPABILITIES: EngineCapabilities = Object.freeze({
  sniffing: Object.freeze(['http', 'tls', 'quic'] as SniffOverride[]),
  route_only: true,
  empty_shadowsocks: true,
});

const atLeast = (v: Version, min: Version) => (v[0] !== min[0] ? v[0] > min[0] : v[1] !== min[1] ? v[1] > min[1] : v[2] >= min[2]);

/**
 * The engine of a reported version. "Xray …" / "V2Ray …" name the family; a bare version is
 * Xray's when its major is 1 or 24 and above (Xray's releases: 1.x, then 24.x by year), V2Ray's
 * when it is 4 or 5. Anything else (an empty string, another numbering) is `unknown` with
 * COMMON_CAPABILITIES. Null, a node whose agent never reported, is compiled for current Xray:
 * nothing is sent to an agent before its Hello, which sets the engine first (adoptEngines).
 */
export function engineOf(reported: string | null): Engine {
  if (reported === null) return { family: 'xray', version: null, capabilities: XRAY_CAPABILITIES };
  const m = /(\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?/.exec(reported);
  const unknown: Engine = { family: 'unknown', version: reported, capabilities: COMMON_CAPABILITIES };
  if (!m) return unknown;
  const v: Version = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  const named = /xray/i.test(reported) ? 'xray' : /v2ray|v2fly/i.test(reported) ? 'v2ray' : null;
  const family = named ?? (v[0] === 1 || v[0] >= 24 ? 'xray' : v[0] === 4 || v[0] === 5 ? 'v2ray' : null);
  if (family === 'xray')
    return {
      family,
      version: reported,
      capabilities: {
        sniffing: atLeast(v, XRAY_FIRST.quic) ? XRAY_CAPABILITIES.sniffing : COMMON_CAPABILITIES.sniffing,
        route_only: atLeast(v, XRAY_FIRST.route_only),
        empty_shadowsocks: atLeast(v, XRAY_FIRST.empty_shadowsocks),
      },
    };
  if (family === 'v2ray')
    return {
      family,
      version: reported,
      capabilities: {
        ...COMMON_CAPABILITIES,
        sniffing: atLeast(v, V2RAY_QUIC) ? XRAY_CAPABILITIES.sniffing : COMMON_CAPABILITIES.sniffing,
      },
    };
  return unknown;
}

/** Whether two reported versions compile alike (a node that reconnects with the other needs a new revision only when not). */
export function sameCapabilities(a: EngineCapabilities, b: EngineCapabilities): boolean {
  return (
    a.route_only === b.route_only &&
    a.empty_shadowsocks === b.empty_shadowsocks &&
    a.sniffing.length === b.sniffing.length &&
    a.sniffing.every((d) => b.sniffing.includes(d))
  );
}

/**
 * The sniffing an inbound runs with on an engine: the profile's destinations the engine accepts
 * (bittorrent never: no engine overrides with it; sniffing on is what lets a bittorrent rule
 * match). Route-only sniffing on an engine without routeOnly becomes sniffing without
 * destOverride: the destination is left as the client sent it, which is all route-only changes
 * for our routing (its rules match inbound tags and sniffed protocols, never domains).
 */
export function sniffingFor(asked: SniffingSettings<string>, c: EngineCapabilities): SniffingSettings<SniffOverride> {
  if (asked.route_only && !c.route_only) return { enabled: asked.enabled, dest_override: [], route_only: false };
  const kept = asked.dest_override.filter((d): d is SniffOverride => (c.sniffing as readonly string[]).includes(d));
  return { enabled: asked.enabled, dest_override: kept, route_only: asked.route_only };
}

export interface SniffingSettings<D extends string> {
  enabled: boolean;
  dest_override: readonly D[];
  route_only: boolean;
}

/**
 * Whether an inbound with `users` users goes into the engine's configuration: a Shadowsocks
 * inbound nobody may use yet is left out on an engine that refuses one (V2Ray), where it would
 * take every other inbound down with it; it comes back with its first user.
 */
export function engineRunsInbound(c: EngineCapabilities, protocol: Protocol, users: number): boolean {
  return users > 0 || protocol !== 'shadowsocks' || c.empty_shadowsocks;
}
