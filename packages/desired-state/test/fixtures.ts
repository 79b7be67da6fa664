import { XRAY_CAPABILITIES } from '@svc/domain';
import type { ModelInbound, ModelSubscription, NodeModel } from '../src/model.ts';

/** Hand-written models for the golden tests: every protocol, transport, security and chain case. */
export const NOW = new Date('2026-11-21T12:00:00Z');

const sniff = { enabled: true, dest_override: ['http', 'tls', 'quic'], route_only: false };

export function inbound(
  id: string,
  port: number,
  protocol: ModelInbound['protocol'],
  stream: ModelInbound['stream'],
  extra: Partial<ModelInbound> = {},
): ModelInbound {
  return {
    id,
    tag: `${protocol}-${port}`,
    port,
    listen: null,
    chain_id: null,
    protocol,
    stream,
    reality_private_key: null,
    sniffing: sniff,
    vless_flow: null,
    shadowsocks_method: null,
    shadowsocks_server_key: null,
    block_bittorrent: false,
    ...extra,
  };
}

export function subscription(n: number, inbound_ids: string[], extra: Partial<ModelSubscription> = {}): ModelSubscription {
  const hex = n.toString(16).padStart(12, '0');
  return {
    id: `sub_${String(n).padStart(26, '0')}`,
    status: 'active',
    traffic_limit_bytes: null,
    expires_at: null,
    client_status: 'active',
    vless_uuid: `00000000-0000-4000-8000-${hex}`,
    vmess_uuid: `11111111-1111-4111-8111-${hex}`,
    trojan_password: `trojan-password-${n}`,
    shadowsocks_password: Buffer.alloc(32, n).toString('base64'),
    inbound_ids,
    ...extra,
  };
}

const CERT = {
  id: 'crt_edge',
  cert_pem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
  key_pem: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n',
};
const TLS = { server_names: ['edge.example.com'], alpn: 'h2,http/1.1', min_version: '1.2' as const, certificate_id: CERT.id };
const REALITY = {
  dest: 'www.example.com:443',
  server_names: ['www.example.com'],
  public_key: 'Z84J2IelR9ch3k8VtlVhhs5ycBUlXA7wHBWcBrjqnAw',
  short_ids: ['6ba85179e30d4fc2'],
  fingerprint: 'chrome' as const,
};
const REALITY_KEY = 'SMWnsVcHmAu6wEHtDh2hCGDjsM7bgBW1GExRbQDv2XE';

/** One node with an inbound of every protocol x transport x security the profiles allow, and users. */
export function everyTransportNode(): NodeModel {
  const inbounds = [
    inbound('i01', 1001, 'vless', { network: 'tcp', security: 'none', tcp: { accept_proxy_protocol: false } }),
    inbound(
      'i02',
      1002,
      'vless',
      { network: 'tcp', security: 'reality', tcp: { accept_proxy_protocol: false }, reality: REALITY },
      {
        reality_private_key: REALITY_KEY,
        vless_flow: 'xtls-rprx-vision',
        block_bittorrent: true,
      },
    ),
    inbound(
      'i03',
      1003,
      'vless',
      { network: 'tcp', security: 'tls', tcp: { accept_proxy_protocol: true }, tls: TLS },
      { vless_flow: 'xtls-rprx-vision' },
    ),
    inbound('i04', 1004, 'vless', {
      network: 'ws',
      security: 'tls',
      ws: { path: '/ws', headers: { 'X-B': '2', Host: 'edge.example.com' } },
      tls: TLS,
    }),
    inbound(
      'i05',
      1005,
      'vless',
      { network: 'grpc', security: 'reality', grpc: { service_name: 'svc', multi_mode: true }, reality: REALITY },
      {
        reality_private_key: REALITY_KEY,
      },
    ),
    inbound(
      'i06',
      1006,
      'vless',
      { network: 'xhttp', security: 'reality', xhttp: { path: '/x', host: '', mode: 'auto' }, reality: REALITY },
      {
        reality_private_key: REALITY_KEY,
      },
    ),
    inbound('i07', 1007, 'vless', {
      network: 'httpupgrade',
      security: 'tls',
      httpupgrade: { path: '/up', host: 'edge.example.com' },
      tls: TLS,
    }),
    inbound('i08', 1008, 'vmess', { network: 'tcp', security: 'none', tcp: { accept_proxy_protocol: false } }),
    inbound('i09', 1009, 'vmess', { network: 'ws', security: 'none', ws: { path: '/', headers: {} } }),
    inbound('i10', 1010, 'vmess', { network: 'grpc', security: 'tls', grpc: { service_name: 'vm', multi_mode: false }, tls: TLS }),
    inbound('i11', 1011, 'trojan', { network: 'tcp', security: 'tls', tcp: { accept_proxy_protocol: false }, tls: TLS }),
    inbound('i12', 1012, 'trojan', {
      network: 'xhttp',
      security: 'tls',
      xhttp: { path: '/t', host: 'edge.example.com', mode: 'packet_up' },
      tls: TLS,
    }),
    inbound(
      'i13',
      1013,
      'shadowsocks',
      { network: 'tcp', security: 'none', tcp: { accept_proxy_protocol: false } },
      { shadowsocks_method: 'aes-256-gcm' },
    ),
    inbound(
      'i14',
      1014,
      'shadowsocks',
      { network: 'tcp', security: 'none', tcp: { accept_proxy_protocol: false } },
      {
        shadowsocks_method: '2022-blake3-aes-128-gcm',
        shadowsocks_server_key: Buffer.alloc(16, 0xaa).toString('base64'),
      },
    ),
    inbound(
      'i15',
      1015,
      'shadowsocks',
      { network: 'tcp', security: 'none', tcp: { accept_proxy_protocol: false } },
      {
        shadowsocks_method: '2022-blake3-aes-256-gcm',
        shadowsocks_server_key: Buffer.alloc(32, 0xbb).toString('base64'),
        listen: '127.0.0.1',
      },
    ),
  ];
  const all = inbounds.map((i) => i.id);
  return {
    node_id: 'nod_edge',
    revision: 7,
    now: NOW,
    engine: XRAY_CAPABILITIES,
    inbounds,
    subscriptions: [
      subscription(1, all),
      subscription(2, ['i01', 'i08']),
      subscription(3, all, { status: 'disabled' }),
      subscription(4, all, { client_status: 'disabled' }),
      subscription(5, all, { expires_at: new Date(NOW.getTime() - 1000) }),
      subscription(6, ['i13'], { traffic_limit_bytes: 10, status: 'limited' }),
    ],
    chains: [],
    certificates: [CERT],
  };
}

const chain = {
  id: 'chn_fra_ams_lon',
  hops: [
    { position: 0, node_id: 'nod_fra', address: 'fra.example.net', port: 30001, secret: 'secret-fra' },
    { position: 1, node_id: 'nod_ams', address: 'ams.example.net', port: 30002, secret: 'secret-ams' },
    { position: 2, node_id: 'nod_lon', address: '2001:db8::1', port: 30003, secret: 'secret-lon' },
  ],
};

/** The three hops of one chain: entry (with its client inbound), middle, exit. */
export function chainNodes(): NodeModel[] {
  const entry = inbound(
    'e1',
    443,
    'vless',
    { network: 'tcp', security: 'none', tcp: { accept_proxy_protocol: false } },
    {
      chain_id: chain.id,
      block_bittorrent: true,
    },
  );
  const local = inbound('e2', 8443, 'trojan', { network: 'tcp', security: 'none', tcp: { accept_proxy_protocol: false } });
  const base = { revision: 3, now: NOW, engine: XRAY_CAPABILITIES, subscriptions: [subscription(9, ['e1', 'e2'])], certificates: [] };
  return [
    { ...base, node_id: 'nod_fra', inbounds: [entry, local], chains: [chain] },
    { ...base, node_id: 'nod_ams', inbounds: [], subscriptions: [], chains: [chain] },
    { ...base, node_id: 'nod_lon', inbounds: [], subscriptions: [], chains: [chain] },
  ];
}

/**
 * Issue 36: one inbound and users with each kind of live limit (NodeConfig.user_limits): none,
 * a device limit, caps, an expiry, a traffic limit with its slice and without one (unmetered
 * here), everything at once, and a limited user (not serving: no entry).
 */
export function userLimitsNode(): NodeModel {
  const ids = ['i1'];
  const day = 86_400_000;
  return {
    node_id: 'nod_limits',
    revision: 9,
    now: NOW,
    engine: XRAY_CAPABILITIES,
    inbounds: [inbound('i1', 443, 'vless', { network: 'tcp', security: 'none', tcp: { accept_proxy_protocol: false } })],
    subscriptions: [
      subscription(7, ids, {
        traffic_limit_bytes: 10_000_000_000,
        device_limit: 3,
        upload_bps: 2_000_000,
        download_bps: 8_000_000,
        expires_at: new Date(NOW.getTime() + 30 * day),
      }),
      subscription(1, ids),
      subscription(3, ids, { upload_bps: 1_000_000, download_bps: null }),
      subscription(2, ids, { device_limit: 2 }),
      subscription(4, ids, { expires_at: new Date(NOW.getTime() + day) }),
      subscription(6, ids, { traffic_limit_bytes: 5_000_000 }),
      subscription(5, ids, { traffic_limit_bytes: 1_000_000 }),
      subscription(8, ids, { traffic_limit_bytes: 10, status: 'limited', device_limit: 1 }),
    ],
    chains: [],
    certificates: [],
    slices: new Map([
      ['sub_00000000000000000000000005', { slice_id: '41', slice_bytes: '999800' }],
      ['sub_00000000000000000000000007', { slice_id: '42', slice_bytes: '268435456' }],
      ['sub_00000000000000000000000008', { slice_id: '43', slice_bytes: '0' }],
    ]),
  };
}
