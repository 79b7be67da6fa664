import { canonicalJson } from './encoding.ts';
import type { ServerEntry, SubscriptionDocument } from './model.ts';
import { servedServers, uniqueNames } from './placeholder.ts';
import { grpcOf, httpTransport, realityOf, splitEarlyData, tlsOf, unusableReason, visionFlow } from './stream.ts';

/**
 * sing-box JSON profile (SFA, SFI, SFM, SFT, Karing, Hiddify Next, the sing-box CLI), in the
 * sing-box 1.12+ shape (sing-box.sagernet.org/configuration/): typed DNS servers, rule actions
 * (`sniff`, `hijack-dns`) instead of the removed `block`/`dns` outbounds and inbound sniff fields,
 * `route.default_domain_resolver`. A 1.11 or older core rejects it; current app builds ship 1.12+.
 *
 * Outbounds: `proxy` (selector, default `auto`), `auto` (urltest), one per server, `direct`.
 * Inbounds: a tun with auto_route (what SFA/SFI/Hiddify run) and a mixed proxy on 127.0.0.1:2080.
 * DNS goes over DoH through `proxy`; server names resolve with the system resolver (`dns-local`).
 *
 * Skipped (see `singBoxSkipReason`): what `unusableReason` rejects; XHTTP, which upstream
 * sing-box does not have. gRPC is always "gun" (a multi-mode Xray server accepts it too).
 */

export const SING_BOX_SELECTOR = 'proxy';
export const SING_BOX_URLTEST = 'auto';
export const SING_BOX_DIRECT = 'direct';
const RESERVED = [SING_BOX_SELECTOR, SING_BOX_URLTEST, SING_BOX_DIRECT];

export function singBoxSkipReason(s: ServerEntry): string | undefined {
  const unusable = unusableReason(s);
  if (unusable) return unusable;
  if (s.stream.network === 'xhttp') return 'sing-box has no XHTTP transport';
  return undefined;
}

/** One sing-box outbound for a server, tagged `tag`. */
export function singBoxOutbound(s: ServerEntry, tag: string = s.name): Record<string, unknown> {
  const base = { tag, server: s.address, server_port: s.port };
  switch (s.protocol) {
    case 'vless':
      return { ...base, type: 'vless', uuid: s.uuid, flow: visionFlow(s) || undefined, tls: tls(s), transport: transport(s) };
    case 'vmess':
      return { ...base, type: 'vmess', uuid: s.uuid, security: 'auto', alter_id: 0, tls: tls(s), transport: transport(s) };
    case 'trojan':
      return { ...base, type: 'trojan', password: s.password, tls: tls(s), transport: transport(s) };
    case 'shadowsocks':
      return { ...base, type: 'shadowsocks', method: s.method, password: s.password };
  }
}

export function renderSingBox(doc: SubscriptionDocument): string {
  const servers = servedServers(doc, singBoxSkipReason);
  const tags = uniqueNames(servers, RESERVED);
  const config = {
    log: { level: 'warn', timestamp: true },
    dns: {
      servers: [
        { type: 'https', tag: 'dns-remote', server: '1.1.1.1', detour: SING_BOX_SELECTOR },
        { type: 'local', tag: 'dns-local' },
      ],
      final: 'dns-remote',
    },
    inbounds: [
      { type: 'tun', tag: 'tun-in', address: ['172.19.0.1/30', 'fdfe:dcba:9876::1/126'], auto_route: true, strict_route: true },
      { type: 'mixed', tag: 'mixed-in', listen: '127.0.0.1', listen_port: 2080 },
    ],
    outbounds: [
      { type: 'selector', tag: SING_BOX_SELECTOR, outbounds: [SING_BOX_URLTEST, ...tags], default: SING_BOX_URLTEST },
      { type: 'urltest', tag: SING_BOX_URLTEST, outbounds: tags, url: 'https://www.gstatic.com/generate_204', interval: '3m' },
      ...servers.map((s, i) => singBoxOutbound(s, tags[i])),
      { type: 'direct', tag: SING_BOX_DIRECT },
    ],
    route: {
      rules: [{ action: 'sniff' }, { protocol: 'dns', action: 'hijack-dns' }, { ip_is_private: true, outbound: SING_BOX_DIRECT }],
      final: SING_BOX_SELECTOR,
      auto_detect_interface: true,
      default_domain_resolver: 'dns-local',
    },
  };
  return `${canonicalJson(config)}\n`;
}

function tls(s: ServerEntry): Record<string, unknown> | undefined {
  const t = tlsOf(s);
  if (t) {
    return {
      enabled: true,
      server_name: t.sni || undefined,
      alpn: t.alpn.length > 0 ? t.alpn : undefined,
      insecure: t.allowInsecure || undefined,
      utls: t.fingerprint ? { enabled: true, fingerprint: t.fingerprint } : undefined,
    };
  }
  const r = realityOf(s);
  if (r) {
    // sing-box's REALITY client needs uTLS.
    return {
      enabled: true,
      server_name: r.sni || undefined,
      utls: { enabled: true, fingerprint: r.fingerprint },
      reality: { enabled: true, public_key: r.publicKey, short_id: r.shortId || undefined },
    };
  }
  return undefined;
}

function transport(s: ServerEntry): Record<string, unknown> | undefined {
  const http = httpTransport(s);
  switch (s.stream.network) {
    case 'ws': {
      const { path, maxEarlyData } = splitEarlyData(http?.path ?? '/');
      const early = maxEarlyData > 0 ? { max_early_data: maxEarlyData, early_data_header_name: 'Sec-WebSocket-Protocol' } : {};
      return { type: 'ws', path, headers: http?.host ? { Host: http.host } : undefined, ...early };
    }
    case 'httpupgrade':
      return { type: 'httpupgrade', path: http?.path, host: http?.host || undefined };
    case 'grpc':
      return { type: 'grpc', service_name: grpcOf(s).serviceName };
    default:
      return undefined;
  }
}
