import { z } from 'zod';
import { CreateInboundProfileInput } from '../inbound-profiles/create-inbound-profile.ts';
import { DEFAULT_SNIFFING, type ProfileFields, SHADOWSOCKS_METHODS, SNIFF_DESTS } from '../inbound-profiles/profile.ts';
import { REALITY_FINGERPRINTS } from '../inbound-profiles/stream.ts';
import type { ImportedInbound, ImportedUser } from './import-batch.ts';

/**
 * The inbound profile a source inbound becomes: its protocol, transport and security as the
 * source runs them (Xray JSON, as Marzban's xray_config.json and 3x-ui's inbounds hold them),
 * in our profile's terms, checked by the same schema an admin's profile is. What has no
 * counterpart here (mKCP, QUIC, HTTP/2, TCP's HTTP header, a TLS certificate file on the old
 * machine with none named here) is the reason the profile is not made.
 *
 * Kept as the source has it, because the links customers hold carry it: ports and paths,
 * REALITY's private key (its public key is in every link) and short ids, a Shadowsocks 2022
 * server key, the SNI names.
 */
export type ImportedProfile = { fields: ProfileFields; shadowsocksServerKey: string | null } | { why: string };

export interface ImportedProfileOptions {
  /** The certificate TLS inbounds serve with here (the source's certificate files stay on its machine). */
  tlsCertificateId: string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : []);

/** Xray's names of a network, old and new, to ours. */
const NETWORK_OF: Record<string, string> = {
  tcp: 'tcp',
  raw: 'tcp',
  ws: 'ws',
  websocket: 'ws',
  grpc: 'grpc',
  gun: 'grpc',
  httpupgrade: 'httpupgrade',
  xhttp: 'xhttp',
  splithttp: 'xhttp',
};
const XHTTP_MODE_OF: Record<string, string> = {
  auto: 'auto',
  'packet-up': 'packet_up',
  'stream-up': 'stream_up',
  'stream-one': 'stream_one',
};
const TLS_VERSION_OF: Record<string, string> = { '1.0': '1.0', '1.1': '1.1', '1.2': '1.2', '1.3': '1.3' };

export function importedInboundProfile(
  inbound: ImportedInbound,
  users: readonly ImportedUser[],
  profileName: string,
  options: ImportedProfileOptions,
): ImportedProfile {
  const s = inbound.streamSettings ?? {};
  const rawNetwork = (str(s.network) ?? 'tcp').toLowerCase();
  const network = NETWORK_OF[rawNetwork];
  if (!network) return { why: `its transport ${rawNetwork} is not one this control plane runs (tcp, ws, grpc, httpupgrade, xhttp)` };
  const stream: Record<string, unknown> = { network };

  if (network === 'tcp') {
    const tcp = isObject(s.tcpSettings) ? s.tcpSettings : isObject(s.rawSettings) ? s.rawSettings : {};
    const header = isObject(tcp.header) ? str(tcp.header.type) : undefined;
    if (header && header !== 'none') return { why: `its TCP ${header} header obfuscation has no counterpart here` };
    const sockopt = isObject(s.sockopt) ? s.sockopt : {};
    stream.tcp = { accept_proxy_protocol: tcp.acceptProxyProtocol === true || sockopt.acceptProxyProtocol === true };
  } else if (network === 'ws') {
    const ws = isObject(s.wsSettings) ? s.wsSettings : {};
    const headers: Record<string, string> = {};
    if (isObject(ws.headers)) for (const [k, v] of Object.entries(ws.headers)) if (typeof v === 'string') headers[k] = v;
    const host = str(ws.host);
    if (host && !Object.keys(headers).some((k) => k.toLowerCase() === 'host')) headers.Host = host;
    stream.ws = { path: str(ws.path) ?? '/', headers };
  } else if (network === 'grpc') {
    const grpc = isObject(s.grpcSettings) ? s.grpcSettings : {};
    const serviceName = str(grpc.serviceName);
    if (!serviceName) return { why: 'its gRPC transport has no service name' };
    stream.grpc = { service_name: serviceName, multi_mode: grpc.multiMode === true };
  } else if (network === 'httpupgrade') {
    const h = isObject(s.httpupgradeSettings) ? s.httpupgradeSettings : {};
    stream.httpupgrade = { path: str(h.path) ?? '/', host: str(h.host) ?? '' };
  } else {
    const x = isObject(s.xhttpSettings) ? s.xhttpSettings : isObject(s.splithttpSettings) ? s.splithttpSettings : {};
    const mode = XHTTP_MODE_OF[str(x.mode) ?? 'auto'];
    if (!mode) return { why: `its XHTTP mode ${String(x.mode)} is not one this control plane runs` };
    stream.xhttp = { path: str(x.path) ?? '/', host: str(x.host) ?? '', mode };
  }

  const security = (str(s.security) ?? 'none').toLowerCase();
  if (security === 'tls') {
    if (!options.tlsCertificateId)
      return { why: "it serves TLS with the old machine's certificate files: name a certificate of this installation to import it with" };
    const tls = isObject(s.tlsSettings) ? s.tlsSettings : {};
    const serverName = str(tls.serverName);
    stream.security = 'tls';
    stream.tls = {
      server_names: serverName ? [serverName] : [],
      alpn: strings(tls.alpn).join(','),
      min_version: TLS_VERSION_OF[str(tls.minVersion) ?? ''] ?? '1.2',
      certificate_id: options.tlsCertificateId,
    };
  } else if (security === 'reality') {
    const r = isObject(s.realitySettings) ? s.realitySettings : {};
    const inner = isObject(r.settings) ? r.settings : {};
    const fingerprint = str(r.fingerprint) ?? str(inner.fingerprint) ?? 'chrome';
    const dest = r.dest ?? r.target;
    stream.security = 'reality';
    stream.reality = {
      dest: typeof dest === 'number' ? String(dest) : (str(dest) ?? ''),
      server_names: strings(r.serverNames),
      ...(str(r.privateKey) ? { private_key: str(r.privateKey) } : {}),
      // Every short id the source serves, the empty one too (links may hold any of them).
      ...(Array.isArray(r.shortIds) && r.shortIds.length > 0 ? { short_ids: r.shortIds.filter((i) => typeof i === 'string') } : {}),
      fingerprint: (REALITY_FINGERPRINTS as readonly string[]).includes(fingerprint) ? fingerprint : 'chrome',
    };
    if (!str(r.privateKey)) return { why: 'its REALITY settings have no private key (the links hold its public key)' };
  } else if (security === 'none' || security === '') {
    stream.security = 'none';
  } else return { why: `its security ${security} is not one this control plane runs (none, tls, reality)` };

  const given = inbound.protocol === 'shadowsocks' ? shadowsocksMethodOf(inbound, users) : null;
  if (inbound.protocol === 'shadowsocks' && given === null) return { why: 'it names no Shadowsocks method and no user of it holds one' };
  const method = given !== null && (SHADOWSOCKS_METHODS as readonly string[]).includes(given) ? given : null;
  if (inbound.protocol === 'shadowsocks' && !method)
    return { why: `its Shadowsocks method ${given} is not one Xray serves to several users here (${SHADOWSOCKS_METHODS.join(', ')})` };
  // Vision runs over TCP with TLS or REALITY only (the sources serve it only there, too).
  const flow =
    inbound.protocol === 'vless' &&
    network === 'tcp' &&
    (security === 'tls' || security === 'reality') &&
    users.some((u) => u.inboundTags.includes(inbound.tag) && u.credentials.vless?.flow === 'xtls-rprx-vision')
      ? 'xtls-rprx-vision'
      : null;

  const input = CreateInboundProfileInput.safeParse({
    name: profileName,
    protocol: inbound.protocol,
    stream,
    sniffing: sniffingOf(inbound.sniffing),
    vless_flow: flow,
    shadowsocks_method: method,
  });
  if (!input.success) {
    const issues = input.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    return { why: `its settings are not a valid profile here (${issues})` };
  }
  const { sniffing, ...rest } = input.data;
  return {
    fields: {
      ...rest,
      sniffing: { ...DEFAULT_SNIFFING, ...Object.fromEntries(Object.entries(sniffing ?? {}).filter(([, v]) => v !== undefined)) },
    },
    shadowsocksServerKey: method?.startsWith('2022-') ? inbound.shadowsocksServerKey : null,
  };
}

/** The inbound's method, or (Marzban keeps it per user) the one its users share. */
function shadowsocksMethodOf(inbound: ImportedInbound, users: readonly ImportedUser[]): string | null {
  const method =
    inbound.shadowsocksMethod ??
    users.find((u) => u.inboundTags.includes(inbound.tag) && u.credentials.shadowsocks)?.credentials.shadowsocks?.method ??
    null;
  return method || null;
}

const SniffingOut = z.object({
  enabled: z.boolean().optional(),
  dest_override: z.array(z.enum(SNIFF_DESTS)).optional(),
  route_only: z.boolean().optional(),
});

function sniffingOf(raw: Record<string, unknown> | null): z.infer<typeof SniffingOut> | undefined {
  if (!raw) return undefined;
  const dests = strings(raw.destOverride).filter((d) => (SNIFF_DESTS as readonly string[]).includes(d));
  return SniffingOut.parse({
    ...(typeof raw.enabled === 'boolean' ? { enabled: raw.enabled } : {}),
    ...(Array.isArray(raw.destOverride) ? { dest_override: [...new Set(dests)] } : {}),
    ...(typeof raw.routeOnly === 'boolean' ? { route_only: raw.routeOnly } : {}),
  });
}
