import {
  type Inbound,
  type InboundUser,
  Network,
  type NodeConfig,
  type Outbound,
  Protocol,
  type RoutingRule,
  SecurityT,
  type Sniffing,
  type StreamSettings,
  XhttpMode,
} from '@svc/proto';
import type { CertificateFiles } from '../src/index.ts';

/** Hand-built NodeConfig inputs (typed with the @svc/proto types) for the golden and v2ray tests. */

export const CERT_ID = 'crt_edge';
/** The layout the golden files pin: one directory per certificate id under the agent's state dir. */
export const goldenCertificatePaths = (id: string): CertificateFiles => ({
  certFile: `/var/lib/svc-agent/certs/${id}/fullchain.pem`,
  keyFile: `/var/lib/svc-agent/certs/${id}/privkey.pem`,
});

export const UUID = [
  '100147b0-48ee-49da-8321-73284d173bab',
  'eee15d61-e14d-4a96-8bd1-d6a1a443e8ce',
  'd19c9ed7-be5e-4da9-88e7-107cd847529c',
  '3110ac0e-eb43-4666-8e1e-e1be0e7dd366',
] as const;
/** An x25519 key pair in Xray's encoding (base64url, no padding). */
export const REALITY_PRIVATE_KEY = '4PXMbsvLdVfk6PZLuWEe4xN3rT3YhpJ2njTzfrvFbEg';
export const REALITY_PUBLIC_KEY = 'UGG-yNsNyj8kwLf_DOSImS1wRBnRk6bIPr0SP711CUE';
/** Shadowsocks 2022 keys: 16 bytes for blake3-aes-128-gcm, 32 bytes for the others. */
export const SS16 = ['wLrlCp9wYo2W+Gg4pwbfrg==', 'IAjgejOPwUMtO//3JEz7Kw==', 'TOvYvjw9zzWJxlZx/HXGXg=='] as const;
export const SS32 = [
  'ESMsmDoawHBT+J9sd29c6D7kbk6OxDYSU4CObKI5nQY=',
  'hju77LruJTqpqu2KpPT0O6Ylkb3ELWUAf7iZUAkEjWc=',
  'kn336UQByTj0vA1ZY0Cdh/k2q8SWbFFuWLFBvnE0Sx4=',
] as const;

export const email = (n: number) => `sub_${String(n).padStart(4, '0')}@svc`;

export const sniffing = (over: Partial<Sniffing> = {}): Sniffing => ({
  enabled: true,
  destOverride: ['http', 'tls', 'quic'],
  routeOnly: false,
  ...over,
});

export const plainTcp = (): StreamSettings => ({ network: Network.TCP, security: SecurityT.NONE, tcp: { acceptProxyProtocol: false } });

export const tls = (alpn = 'h2,http/1.1'): Pick<StreamSettings, 'security' | 'tlsSettings'> => ({
  security: SecurityT.TLS,
  tlsSettings: { serverNames: ['edge.example.com'], alpn, minVersion: '1.2', certificateId: CERT_ID },
});

export const reality = (): Pick<StreamSettings, 'security' | 'reality'> => ({
  security: SecurityT.REALITY,
  reality: {
    dest: 'www.example.org:443',
    serverNames: ['www.example.org', 'example.org'],
    privateKey: REALITY_PRIVATE_KEY,
    publicKey: REALITY_PUBLIC_KEY,
    shortIds: ['', '6ba85179e30d4fc2'],
    fingerprint: 'chrome',
  },
});

export const inbound = (over: Partial<Inbound> & Pick<Inbound, 'tag' | 'protocol' | 'port' | 'users'>): Inbound => ({
  listen: '',
  stream: plainTcp(),
  sniffing: sniffing(),
  ...over,
});

export const vlessUser = (n: number, flow = ''): InboundUser => ({ email: email(n), vless: { id: UUID[n % UUID.length] as string, flow } });
export const vmessUser = (n: number): InboundUser => ({ email: email(n), vmess: { id: UUID[n % UUID.length] as string } });
export const trojanUser = (n: number): InboundUser => ({ email: email(n), trojan: { password: `trojan-password-${n}` } });
export const ssUser = (n: number, method: string, password: string): InboundUser => ({
  email: email(n),
  shadowsocks: { method, password },
});

export const DIRECT: Outbound = { tag: 'direct', protocol: Protocol.FREEDOM, address: '', port: 0, stream: undefined };
export const BLOCK: Outbound = { tag: 'block', protocol: Protocol.BLACKHOLE, address: '', port: 0, stream: undefined };
export const toDirect = (tag: string): RoutingRule => ({ inboundTag: tag, outboundTag: 'direct', protocols: [] });
export const torrentToBlock = (tag: string): RoutingRule => ({ inboundTag: tag, outboundTag: 'block', protocols: ['bittorrent'] });

export const certificates = (certPem = 'CERT', keyPem = 'KEY') => [{ id: CERT_ID, certPem, keyPem }];

export function nodeConfig(inbounds: Inbound[], extra: { outbounds?: Outbound[]; rules?: RoutingRule[] } = {}): NodeConfig {
  return {
    xray: {
      inbounds,
      outbounds: [DIRECT, BLOCK, ...(extra.outbounds ?? [])],
      routingRules: extra.rules ?? inbounds.map((i) => toDirect(i.tag)),
    },
    certificates: certificates(),
    userLimits: [],
  };
}

/** VLESS + REALITY over TCP with the vision flow: the usual Xray-only server. */
export function realityVisionNode(): NodeConfig {
  const tag = 'vless-reality-443';
  return nodeConfig(
    [
      inbound({
        tag,
        protocol: Protocol.VLESS,
        port: 443,
        stream: { network: Network.TCP, tcp: { acceptProxyProtocol: false }, ...reality() },
        users: [vlessUser(1, 'xtls-rprx-vision'), vlessUser(2, 'xtls-rprx-vision')],
      }),
    ],
    { rules: [torrentToBlock(tag), toDirect(tag)] },
  );
}

/** The Xray-only transports: XHTTP (with REALITY), HTTPUpgrade and gRPC (with TLS), WebSocket headers. */
export function xrayTransportsNode(): NodeConfig {
  return nodeConfig([
    inbound({
      tag: 'vless-xhttp-reality',
      protocol: Protocol.VLESS,
      port: 2053,
      stream: { network: Network.XHTTP, xhttp: { path: '/xh', host: 'cdn.example.com', mode: XhttpMode.STREAM_UP }, ...reality() },
      users: [vlessUser(1)],
    }),
    inbound({
      tag: 'trojan-xhttp-tls',
      protocol: Protocol.TROJAN,
      port: 2083,
      stream: { network: Network.XHTTP, xhttp: { path: '/tx', host: '', mode: XhttpMode.PACKET_UP }, ...tls('h2') },
      users: [trojanUser(2)],
    }),
    inbound({
      tag: 'vless-httpupgrade-tls',
      protocol: Protocol.VLESS,
      port: 2087,
      listen: '::',
      stream: { network: Network.HTTPUPGRADE, httpupgrade: { path: '/hu', host: 'edge.example.com' }, ...tls('http/1.1') },
      users: [vlessUser(3)],
    }),
    inbound({
      tag: 'vmess-grpc-tls',
      protocol: Protocol.VMESS,
      port: 2096,
      stream: { network: Network.GRPC, grpc: { serviceName: 'svc.Tunnel', multiMode: true }, ...tls('h2') },
      users: [vmessUser(4)],
    }),
    inbound({
      tag: 'vless-grpc-reality',
      protocol: Protocol.VLESS,
      port: 8443,
      stream: { network: Network.GRPC, grpc: { serviceName: 'grpc', multiMode: false }, ...reality() },
      sniffing: sniffing({ routeOnly: true }),
      users: [vlessUser(5)],
    }),
    inbound({
      tag: 'vmess-ws',
      protocol: Protocol.VMESS,
      port: 8080,
      listen: '0.0.0.0',
      stream: {
        network: Network.WS,
        security: SecurityT.NONE,
        // Insertion order on purpose not sorted: the rendering sorts header names.
        ws: { path: '/ws?ed=2048', headers: { 'X-Zeta': 'z', Host: 'cdn.example.com', 'X-Alpha': 'a' } },
      },
      sniffing: sniffing({ enabled: false, destOverride: [] }),
      users: [vmessUser(6), vmessUser(7)],
    }),
  ]);
}

/**
 * Shadowsocks layouts: classic AEAD with several users (per-client method), 2022 with a server
 * key (`<server key>:<user key>`), 2022 with one user and a plain key (single-user layout), and an
 * inbound without users (no method, `clients: []`).
 */
export function shadowsocksNode(): NodeConfig {
  return nodeConfig([
    inbound({
      tag: 'ss-aead',
      protocol: Protocol.SHADOWSOCKS,
      port: 8388,
      users: [ssUser(1, 'aes-256-gcm', 'password-one'), ssUser(2, 'aes-256-gcm', 'password-two')],
    }),
    inbound({
      tag: 'ss-2022-multi',
      protocol: Protocol.SHADOWSOCKS,
      port: 8389,
      users: [ssUser(3, '2022-blake3-aes-128-gcm', `${SS16[0]}:${SS16[1]}`), ssUser(4, '2022-blake3-aes-128-gcm', `${SS16[0]}:${SS16[2]}`)],
    }),
    inbound({
      tag: 'ss-2022-single',
      protocol: Protocol.SHADOWSOCKS,
      port: 8390,
      users: [ssUser(5, '2022-blake3-chacha20-poly1305', SS32[0])],
    }),
    inbound({ tag: 'ss-no-users', protocol: Protocol.SHADOWSOCKS, port: 8391, users: [] }),
  ]);
}

/**
 * Chain hops. The entry hop routes a client inbound to a Shadowsocks link to the next hop (the
 * compiler's layout); the middle hop has the chain-in inbound and the link onwards; the exit
 * hop sends the chain-in to direct. Plus VLESS and Trojan next hops with REALITY and TLS client
 * settings, which the compiler does not produce today.
 */
export function chainNodes(): { entry: NodeConfig; middle: NodeConfig; exit: NodeConfig; otherHops: NodeConfig } {
  const chainOut = (address: string, port: number, password: string): Outbound => ({
    tag: 'chain-out-chn_1',
    protocol: Protocol.SHADOWSOCKS,
    address,
    port,
    shadowsocks: { method: 'chacha20-ietf-poly1305', password },
    stream: plainTcp(),
  });
  const chainIn = (pos: number, port: number, password: string) =>
    inbound({
      tag: 'chain-in-chn_1',
      protocol: Protocol.SHADOWSOCKS,
      port,
      sniffing: { enabled: false, destOverride: [], routeOnly: false },
      users: [{ email: `chain:chn_1:${pos}`, shadowsocks: { method: 'chacha20-ietf-poly1305', password } }],
    });
  const entry = nodeConfig(
    [inbound({ tag: 'vless-443', protocol: Protocol.VLESS, port: 443, stream: { network: Network.TCP, ...tls() }, users: [vlessUser(1)] })],
    {
      outbounds: [chainOut('hop2.example.net', 30002, 'secret-hop2')],
      rules: [{ inboundTag: 'vless-443', outboundTag: 'chain-out-chn_1', protocols: [] }],
    },
  );
  const middle = nodeConfig([chainIn(1, 30002, 'secret-hop2')], {
    outbounds: [chainOut('2001:db8::3', 30003, 'secret-hop3')],
    rules: [{ inboundTag: 'chain-in-chn_1', outboundTag: 'chain-out-chn_1', protocols: [] }],
  });
  const exit = nodeConfig([chainIn(2, 30003, 'secret-hop3')]);
  const otherHops = nodeConfig([], {
    outbounds: [
      {
        tag: 'hop-vless-reality',
        protocol: Protocol.VLESS,
        address: '203.0.113.7',
        port: 443,
        vless: { id: UUID[0], flow: 'xtls-rprx-vision' },
        stream: { network: Network.TCP, tcp: { acceptProxyProtocol: false }, ...reality() },
      },
      {
        tag: 'hop-trojan-tls',
        protocol: Protocol.TROJAN,
        address: 'hop.example.net',
        port: 8443,
        trojan: { password: 'hop-password' },
        stream: { network: Network.WS, ws: { path: '/t', headers: {} }, ...tls('http/1.1') },
      },
      {
        tag: 'hop-ss-2022',
        protocol: Protocol.SHADOWSOCKS,
        address: 'hop.example.net',
        port: 8389,
        shadowsocks: { method: '2022-blake3-aes-128-gcm', password: `${SS16[0]}:${SS16[1]}` },
        stream: plainTcp(),
      },
    ],
    rules: [],
  });
  return { entry, middle, exit, otherHops };
}
