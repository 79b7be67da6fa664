import type { ServerEntry, SubscriptionDocument, SubscriptionStatus } from '../src/model.ts';

/**
 * Fixture servers: every protocol x transport x security the renderers are meant to serve
 * (VLESS: tcp/ws/grpc/httpupgrade/xhttp x none/tls, REALITY with tcp/grpc/xhttp, Vision over
 * tcp+tls and tcp+REALITY; VMess and Trojan: tcp/ws/grpc/httpupgrade x none/tls; Shadowsocks with
 * a classic and a 2022 method), with the awkward values spread over them: IPv6 addresses, a path
 * needing percent-encoding, an early-data path, names with emoji and URL delimiters, a gRPC
 * multi-mode service, every XHTTP mode, allowInsecure, empty SNI / fingerprint / short id.
 */

export const UUID = [
  '100147b0-48ee-49da-8321-73284d173bab',
  'eee15d61-e14d-4a96-8bd1-d6a1a443e8ce',
  'd19c9ed7-be5e-4da9-88e7-107cd847529c',
] as const;
export const REALITY_KEY = 'Z84J2IelR9ch3k8VtlVhhs5ycBUlXA7wHBWcBrjqnAw';

type Stream = ServerEntry['stream'];
type Network = Stream['network'];
type Security = Stream['security'];

const tls = (sni: string, alpn: string[], fingerprint = 'chrome', allow_insecure = false): Pick<Stream, 'tls'> => ({
  tls: { sni, alpn, fingerprint, allow_insecure },
});
const reality = (short_id: string, fingerprint = 'chrome', spider_x = '/'): Pick<Stream, 'reality'> => ({
  reality: { sni: 'www.microsoft.com', public_key: REALITY_KEY, short_id, fingerprint, spider_x },
});

/** The transport settings of each network for a fixture. */
function transport(network: Network, protocol: string, security: Security): Partial<Stream> {
  switch (network) {
    case 'tcp':
      return {};
    case 'ws':
      return { ws: { path: `/${protocol}-ws`, host: security === 'tls' ? 'cdn.example.com' : '' } };
    case 'grpc':
      return { grpc: { service_name: `${protocol}-grpc`, multi_mode: security === 'tls' } };
    case 'httpupgrade':
      return { httpupgrade: { path: `/${protocol}-hu`, host: 'hu.example.com' } };
    case 'xhttp':
      return { xhttp: { path: `/${protocol}-xh`, host: security === 'tls' ? 'xh.example.com' : '', mode: 'auto' } };
  }
}

function entry(
  protocol: 'vless' | 'vmess' | 'trojan',
  network: Network,
  security: Security,
  extra: Partial<ServerEntry> = {},
): ServerEntry {
  const stream: Stream = {
    network,
    security,
    ...transport(network, protocol, security),
    ...(security === 'tls'
      ? tls(`${protocol}.example.com`, network === 'ws' || network === 'httpupgrade' ? ['http/1.1'] : ['h2', 'http/1.1'])
      : {}),
    ...(security === 'reality' ? reality('6ba85179e30d4fc2') : {}),
  };
  const credentials = protocol === 'trojan' ? { password: `trojan-secret-${network}` } : { uuid: UUID[network.length % 3] };
  return {
    name: `${protocol} ${network} ${security}`,
    protocol,
    address: `${network}.example.net`,
    port: 443,
    ...credentials,
    ...(protocol === 'vless' ? { flow: '' } : {}),
    stream,
    ...extra,
  };
}

const NETWORKS: Network[] = ['tcp', 'ws', 'grpc', 'httpupgrade'];

export function vlessServers(): ServerEntry[] {
  const base = [...NETWORKS, 'xhttp' as const].flatMap((n) => [entry('vless', n, 'none'), entry('vless', n, 'tls')]);
  const realityOnes = (['tcp', 'grpc', 'xhttp'] as const).map((n) => entry('vless', n, 'reality'));
  const vision = [
    entry('vless', 'tcp', 'tls', { name: 'vless tcp tls vision', flow: 'xtls-rprx-vision', address: '203.0.113.10' }),
    entry('vless', 'tcp', 'reality', { name: '🇩🇪 Frankfurt · vless #1 & co?', flow: 'xtls-rprx-vision', address: '2001:db8::10' }),
  ];
  const all = [...base, ...realityOnes, ...vision];
  // Awkward values: a path that needs percent-encoding, every XHTTP mode, empty optional strings.
  for (const s of all) {
    if (s.name === 'vless ws tls' && s.stream.ws) s.stream.ws.path = '/a b?c&d=é';
    if (s.name === 'vless xhttp none' && s.stream.xhttp) s.stream.xhttp.mode = 'packet_up';
    if (s.name === 'vless xhttp tls' && s.stream.xhttp) s.stream.xhttp.mode = 'stream_up';
    if (s.name === 'vless xhttp reality') Object.assign(s.stream, { xhttp: { path: '/xr', host: '', mode: 'stream_one' } });
    if (s.name === 'vless grpc reality') Object.assign(s.stream, reality('', '', ''));
    if (s.name === 'vless tcp tls') Object.assign(s.stream, tls('', [], ''));
  }
  return all;
}

export function vmessServers(): ServerEntry[] {
  const all = NETWORKS.flatMap((n) => [entry('vmess', n, 'none'), entry('vmess', n, 'tls')]);
  const wsTls = all.find((s) => s.name === 'vmess ws tls');
  if (wsTls?.stream.ws) wsTls.stream.ws.path = '/vmess-ws?ed=2560';
  const tcpNone = all.find((s) => s.name === 'vmess tcp none');
  if (tcpNone) tcpNone.address = '2001:db8::20';
  return all;
}

export function trojanServers(): ServerEntry[] {
  const all = NETWORKS.flatMap((n) => [entry('trojan', n, 'none'), entry('trojan', n, 'tls')]);
  const tcpTls = all.find((s) => s.name === 'trojan tcp tls');
  if (tcpTls)
    Object.assign(tcpTls, {
      password: 'p@ss:w/rd?#&=+ é',
      stream: { ...tcpTls.stream, ...tls('trojan.example.com', ['h2'], 'firefox', true) },
    });
  return all;
}

export function shadowsocksServers(): ServerEntry[] {
  const plain: Stream = { network: 'tcp', security: 'none' };
  return [
    {
      name: 'ss aes-256-gcm',
      protocol: 'shadowsocks',
      address: 'ss.example.net',
      port: 8388,
      method: 'aes-256-gcm',
      password: 'a-long-shadowsocks-password',
      stream: plain,
    },
    {
      name: 'ss 2022-blake3-aes-128-gcm',
      protocol: 'shadowsocks',
      address: '2001:db8::30',
      port: 8389,
      method: '2022-blake3-aes-128-gcm',
      // '<server key>:<user key>', as the model hands it over for 2022 methods (base64 keys contain + / =).
      password: 'Mz+VZX0VhBQeI/Sx1KwTnA==:cB+3qUXi/hYlbgvdsjOYFA==',
      stream: plain,
    },
  ];
}

export function everyCombination(): ServerEntry[] {
  return [...vlessServers(), ...vmessServers(), ...trojanServers(), ...shadowsocksServers()];
}

export function doc(servers: ServerEntry[], status: SubscriptionStatus = 'active'): SubscriptionDocument {
  return {
    title: 'Alice · premium',
    status,
    upload_bytes: 1_234_567,
    download_bytes: 89_012_345,
    total_bytes: 107_374_182_400,
    expires_at: new Date('2027-01-31T00:00:00Z'),
    servers: status === 'active' ? servers : [],
  };
}

export const NON_ACTIVE: Exclude<SubscriptionStatus, 'active'>[] = ['expired', 'limited', 'disabled', 'pending'];
