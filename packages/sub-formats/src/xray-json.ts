import { canonicalJson } from './encoding.ts';
import type { ServerEntry, SubscriptionDocument } from './model.ts';
import { servedServers } from './placeholder.ts';
import { grpcOf, httpTransport, realityOf, tlsOf, unusableReason, visionFlow, xhttpMode } from './stream.ts';

/**
 * Full Xray client configs, a JSON array with one config per server: the "custom config"
 * subscription v2rayN, v2rayNG, Happ and Streisand import (each config shows as its `remarks`).
 * Each has a socks inbound on 127.0.0.1:10808 and an http one on 10809 (sniffing http/tls), the
 * outbounds `proxy`, `direct` (freedom) and `block` (blackhole), and a rule sending private and
 * loopback addresses direct (as CIDRs, so no geoip.dat is needed).
 *
 * streamSettings follow Xray's JSON (xtls.github.io/config/transport.html). The network is spelled
 * `tcp` (Xray's alias of `raw`, and the name v2ray knows); a WebSocket Host goes in `headers`,
 * which Xray and v2ray both read. `allowInsecure` is written only when true, and only old cores
 * honour it: Xray 26.2.6+ refuses to start such a config from 2026-06-01 (pinnedPeerCertSha256
 * replaces it), so an entry with allow_insecure fails there while the others still import.
 *
 * Skipped: only what `unusableReason` rejects.
 */

export const XRAY_SOCKS_PORT = 10808;
export const XRAY_HTTP_PORT = 10809;

/** Private, loopback, link-local and CGNAT ranges, IPv4 and IPv6. */
export const PRIVATE_CIDRS = [
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
];

export function xrayJsonSkipReason(s: ServerEntry): string | undefined {
  return unusableReason(s);
}

/** The complete Xray client config for one server. */
export function xrayClientConfig(s: ServerEntry): Record<string, unknown> {
  const sniffing = { enabled: true, destOverride: ['http', 'tls'] };
  return {
    remarks: s.name,
    log: { loglevel: 'warning' },
    inbounds: [
      { tag: 'socks', protocol: 'socks', listen: '127.0.0.1', port: XRAY_SOCKS_PORT, settings: { auth: 'noauth', udp: true }, sniffing },
      { tag: 'http', protocol: 'http', listen: '127.0.0.1', port: XRAY_HTTP_PORT, settings: {}, sniffing },
    ],
    outbounds: [
      { tag: 'proxy', protocol: s.protocol, settings: settings(s), streamSettings: streamSettings(s) },
      { tag: 'direct', protocol: 'freedom', settings: {} },
      { tag: 'block', protocol: 'blackhole', settings: {} },
    ],
    routing: { domainStrategy: 'AsIs', rules: [{ type: 'field', ip: PRIVATE_CIDRS, outboundTag: 'direct' }] },
  };
}

export function renderXrayJson(doc: SubscriptionDocument): string {
  return `${canonicalJson(servedServers(doc, xrayJsonSkipReason).map(xrayClientConfig))}\n`;
}

function settings(s: ServerEntry): Record<string, unknown> {
  const server = { address: s.address, port: s.port };
  switch (s.protocol) {
    case 'vless':
      return { vnext: [{ ...server, users: [{ id: s.uuid, encryption: 'none', flow: visionFlow(s) || undefined }] }] };
    case 'vmess':
      return { vnext: [{ ...server, users: [{ id: s.uuid, alterId: 0, security: 'auto' }] }] };
    case 'trojan':
      return { servers: [{ ...server, password: s.password }] };
    case 'shadowsocks':
      return { servers: [{ ...server, method: s.method, password: s.password }] };
  }
}

function streamSettings(s: ServerEntry): Record<string, unknown> {
  const { network, security } = s.stream;
  const out: Record<string, unknown> = { network, security };
  const http = httpTransport(s);
  if (network === 'ws') out.wsSettings = { path: http?.path, headers: http?.host ? { Host: http.host } : undefined };
  if (network === 'httpupgrade') out.httpupgradeSettings = { path: http?.path, host: http?.host || undefined };
  if (network === 'xhttp') out.xhttpSettings = { path: http?.path, host: http?.host || undefined, mode: xhttpMode(s) };
  if (network === 'grpc') out.grpcSettings = grpcOf(s);
  const tls = tlsOf(s);
  if (tls) {
    out.tlsSettings = {
      serverName: tls.sni || undefined,
      alpn: tls.alpn.length > 0 ? tls.alpn : undefined,
      fingerprint: tls.fingerprint || undefined,
      allowInsecure: tls.allowInsecure || undefined,
    };
  }
  const reality = realityOf(s);
  if (reality) {
    out.realitySettings = {
      serverName: reality.sni,
      publicKey: reality.publicKey,
      shortId: reality.shortId,
      fingerprint: reality.fingerprint,
      spiderX: reality.spiderX,
    };
  }
  return out;
}
