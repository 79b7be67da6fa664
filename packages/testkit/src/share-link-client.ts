import type { ShareLink } from './share-links.ts';

/**
 * A v2ray 4.x client configuration built from a parsed share link, as a share-link app builds
 * its core's config: an HTTP proxy inbound on 127.0.0.1 and one outbound speaking the link's
 * protocol and transport. What v2ray 4 cannot dial (REALITY, gRPC, XHTTP, HTTPUpgrade, VLESS
 * flows) is refused with the reason, rather than turned into a config that silently differs.
 */

export interface V2rayClientOptions {
  /** Port of the HTTP proxy inbound on 127.0.0.1. */
  httpProxyPort: number;
  /** Accept any server certificate (our self-signed one); default: what the link says. */
  allowInsecure?: boolean;
  /** v2ray's log level; default warning. */
  logLevel?: 'debug' | 'info' | 'warning' | 'error' | 'none';
}

const V2RAY4_NETWORKS = ['tcp', 'ws'];

function outboundSettings(link: ShareLink): Record<string, unknown> {
  const server = { address: link.address, port: link.port };
  switch (link.protocol) {
    case 'vmess':
      // alterId 0: the AEAD header, the only one current servers accept.
      return { vnext: [{ ...server, users: [{ id: link.id, alterId: 0, security: link.method ?? 'auto' }] }] };
    case 'vless':
      if (link.flow) throw new Error(`v2ray 4 has no VLESS flow ${link.flow} (${link.name})`);
      return { vnext: [{ ...server, users: [{ id: link.id, encryption: 'none' }] }] };
    case 'trojan':
      return { servers: [{ ...server, password: link.password }] };
    case 'shadowsocks':
      return { servers: [{ ...server, method: link.method, password: link.password }] };
  }
}

function streamSettings(link: ShareLink, opts: V2rayClientOptions): Record<string, unknown> {
  if (!V2RAY4_NETWORKS.includes(link.network)) throw new Error(`v2ray 4 cannot dial network ${link.network} (${link.name})`);
  if (link.security !== 'none' && link.security !== 'tls') throw new Error(`v2ray 4 has no ${link.security} security (${link.name})`);
  const stream: Record<string, unknown> = { network: link.network, security: link.security };
  if (link.network === 'ws') stream.wsSettings = { path: link.path || '/', ...(link.host ? { headers: { Host: link.host } } : {}) };
  if (link.network === 'tcp' && link.headerType === 'http') {
    stream.tcpSettings = {
      header: { type: 'http', request: { path: [link.path || '/'], ...(link.host ? { headers: { Host: [link.host] } } : {}) } },
    };
  }
  if (link.security === 'tls') {
    stream.tlsSettings = {
      serverName: link.sni || link.host || link.address,
      allowInsecure: opts.allowInsecure ?? link.allowInsecure,
      ...(link.alpn.length > 0 ? { alpn: link.alpn } : {}),
    };
  }
  return stream;
}

/** The whole client config: HTTP proxy on 127.0.0.1:httpProxyPort -> the link's server. */
export function v2rayClientFromLink(link: ShareLink, opts: V2rayClientOptions): Record<string, unknown> {
  return {
    log: { loglevel: opts.logLevel ?? 'warning' },
    inbounds: [{ tag: 'http-in', listen: '127.0.0.1', port: opts.httpProxyPort, protocol: 'http', settings: {} }],
    outbounds: [{ tag: 'proxy', protocol: link.protocol, settings: outboundSettings(link), streamSettings: streamSettings(link, opts) }],
  };
}
