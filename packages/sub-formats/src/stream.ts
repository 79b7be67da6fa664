import type { ServerEntry } from './model.ts';

/**
 * Normalised views of a server's stream settings, shared by every format, and the rule for what
 * no format can render. A missing transport object reads as its defaults (path "/", no host), so a
 * thin entry still renders; a missing credential or REALITY key cannot, so such an entry is skipped.
 */

export type Network = ServerEntry['stream']['network'];
export type XhttpMode = NonNullable<ServerEntry['stream']['xhttp']>['mode'];

/** REALITY needs a uTLS fingerprint on every client (Xray refuses an empty one); this is the usual default. */
export const DEFAULT_REALITY_FINGERPRINT = 'chrome';

export interface HttpTransport {
  path: string;
  host: string;
}

/** Path and Host of the HTTP-based transports (ws, httpupgrade, xhttp); undefined for tcp and grpc. */
export function httpTransport(s: ServerEntry): HttpTransport | undefined {
  const { network } = s.stream;
  if (network !== 'ws' && network !== 'httpupgrade' && network !== 'xhttp') return undefined;
  const t = s.stream[network];
  return { path: t?.path || '/', host: t?.host ?? '' };
}

export function grpcOf(s: ServerEntry): { serviceName: string; multiMode: boolean } {
  return { serviceName: s.stream.grpc?.service_name ?? '', multiMode: s.stream.grpc?.multi_mode ?? false };
}

/** Xray spells the XHTTP modes with hyphens (`packet-up`); the model uses underscores. */
export function xhttpMode(s: ServerEntry): string {
  return (s.stream.xhttp?.mode ?? 'auto').replace(/_/g, '-');
}

export interface TlsView {
  sni: string;
  alpn: string[];
  fingerprint: string;
  allowInsecure: boolean;
}

/** The TLS settings when security is tls (defaults for a missing object); undefined otherwise. */
export function tlsOf(s: ServerEntry): TlsView | undefined {
  if (s.stream.security !== 'tls') return undefined;
  const t = s.stream.tls;
  return { sni: t?.sni ?? '', alpn: t?.alpn ?? [], fingerprint: t?.fingerprint ?? '', allowInsecure: t?.allow_insecure ?? false };
}

export interface RealityView {
  sni: string;
  publicKey: string;
  shortId: string;
  fingerprint: string;
  spiderX: string;
}

/** The REALITY settings when security is reality, fingerprint defaulted; undefined otherwise. */
export function realityOf(s: ServerEntry): RealityView | undefined {
  const r = s.stream.reality;
  if (s.stream.security !== 'reality' || !r) return undefined;
  return {
    sni: r.sni,
    publicKey: r.public_key,
    shortId: r.short_id,
    fingerprint: r.fingerprint || DEFAULT_REALITY_FINGERPRINT,
    spiderX: r.spider_x,
  };
}

/**
 * The flow a client must send: `xtls-rprx-vision` only for VLESS over tcp with tls or REALITY,
 * the one place Vision runs. Elsewhere Xray's server ignores the user's flow, so it is left out.
 */
export function visionFlow(s: ServerEntry): string {
  if (s.protocol !== 'vless' || s.stream.network !== 'tcp' || s.stream.security === 'none') return '';
  return s.flow === 'xtls-rprx-vision' ? s.flow : '';
}

export function isShadowsocks2022(method: string): boolean {
  return method.startsWith('2022-blake3-');
}

/**
 * Xray's early-data convention puts `?ed=N` on a WebSocket path; sing-box and mihomo want it as
 * separate options (sent in Sec-WebSocket-Protocol, as Xray does). Returns the path without it.
 */
export function splitEarlyData(path: string): { path: string; maxEarlyData: number } {
  const q = path.indexOf('?');
  if (q < 0) return { path, maxEarlyData: 0 };
  const params = new URLSearchParams(path.slice(q + 1));
  const ed = params.get('ed');
  if (ed === null || !/^\d+$/.test(ed)) return { path, maxEarlyData: 0 };
  params.delete('ed');
  const rest = params.toString();
  return { path: path.slice(0, q) + (rest ? `?${rest}` : ''), maxEarlyData: Number(ed) };
}

/** Why no format can render this entry (undefined: it can be rendered somewhere). */
export function unusableReason(s: ServerEntry): string | undefined {
  const { network, security } = s.stream;
  if ((s.protocol === 'vless' || s.protocol === 'vmess') && !s.uuid) return `${s.protocol} entry without a uuid`;
  if (s.protocol === 'trojan' && !s.password) return 'trojan entry without a password';
  if (s.protocol === 'shadowsocks' && (!s.method || !s.password)) return 'shadowsocks entry without a method and password';
  if (s.protocol === 'shadowsocks' && (network !== 'tcp' || security !== 'none'))
    return 'shadowsocks is served plain over tcp only (share links are plugin-less SIP002)';
  if (security === 'reality' && !s.stream.reality?.public_key) return 'REALITY entry without a public key';
  if (security === 'reality' && network !== 'tcp' && network !== 'grpc' && network !== 'xhttp')
    return `REALITY works only over tcp, grpc and xhttp, not ${network}`;
  return undefined;
}
