import { base64, base64url, canonicalJson } from './encoding.ts';
import type { ServerEntry, SubscriptionDocument } from './model.ts';
import { servedServers } from './placeholder.ts';
import { grpcOf, httpTransport, isShadowsocks2022, realityOf, tlsOf, unusableReason, visionFlow, xhttpMode } from './stream.ts';

/**
 * Share links, one per server, and the base64 list of them that v2rayN, v2rayNG, Shadowrocket,
 * Streisand, Hiddify and Happ import as a subscription body.
 *
 * - vless:// and trojan:// follow the VLESS share link standard (XTLS/Xray-core discussion #716):
 *   `type`, `security`, `sni`, `fp`, `alpn`, `pbk`/`sid`/`spx`, `headerType`, `host`, `path`,
 *   `mode`, `serviceName`, every value percent-encoded with encodeURIComponent.
 * - vmess:// is base64 of v2rayN's JSON (version "2"); every value in it is a string.
 * - ss:// is SIP002 without a plugin: base64url userinfo for classic AEAD methods, percent-encoded
 *   `method:password` for the 2022-blake3 methods (SIP022 forbids base64 there).
 *
 * Skipped (see `shareLinkSkipReason`): what `unusableReason` rejects (among it Shadowsocks over
 * anything but plain tcp: SIP002 links carry no transport), and VMess with REALITY (the vmess JSON
 * has no field for its key).
 */

export function shareLinkSkipReason(s: ServerEntry): string | undefined {
  const unusable = unusableReason(s);
  if (unusable) return unusable;
  if (s.protocol === 'vmess' && s.stream.security === 'reality') return 'the vmess:// JSON has no REALITY fields';
  return undefined;
}

export function shareLink(s: ServerEntry): string {
  const reason = shareLinkSkipReason(s);
  if (reason) throw new Error(`no share link for "${s.name}": ${reason}`);
  switch (s.protocol) {
    case 'vless':
      return `vless://${encodeURIComponent(s.uuid ?? '')}@${hostPort(s)}?${query(vlessParams(s))}${fragment(s.name)}`;
    case 'trojan':
      return `trojan://${encodeURIComponent(s.password ?? '')}@${hostPort(s)}?${query(streamParams(s))}${fragment(s.name)}`;
    case 'vmess':
      return `vmess://${base64(canonicalJson(vmessJson(s), 0))}`;
    case 'shadowsocks':
      return `ss://${ssUserinfo(s.method ?? '', s.password ?? '')}@${hostPort(s)}${fragment(s.name)}`;
  }
}

/** The links of a document in server order (its placeholder's when it has nothing to serve). */
export function shareLinks(doc: SubscriptionDocument): string[] {
  return servedServers(doc, shareLinkSkipReason).map(shareLink);
}

/** Standard base64 of the newline-joined links: the usual subscription body. */
export function base64List(doc: SubscriptionDocument): string {
  return base64(shareLinks(doc).join('\n'));
}

type Params = [string, string][];

const query = (params: Params) => params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
const fragment = (name: string) => `#${encodeURIComponent(name)}`;

/** host:port with an IPv6 address in brackets. */
function hostPort(s: ServerEntry): string {
  return `${s.address.includes(':') ? `[${s.address}]` : s.address}:${s.port}`;
}

/** VLESS adds `encryption=none` (required by the standard) and the vision flow where it applies. */
function vlessParams(s: ServerEntry): Params {
  const flow = visionFlow(s);
  return streamParams(s, [['encryption', 'none'], ...(flow ? [['flow', flow] as [string, string]] : [])]);
}

/** type, security, the protocol's own, then the security's and the transport's parameters (vless and trojan). */
function streamParams(s: ServerEntry, own: Params = []): Params {
  const params: Params = [['type', s.stream.network], ['security', s.stream.security], ...own];
  const tls = tlsOf(s);
  if (tls) {
    if (tls.sni) params.push(['sni', tls.sni]);
    if (tls.fingerprint) params.push(['fp', tls.fingerprint]);
    if (tls.alpn.length > 0) params.push(['alpn', tls.alpn.join(',')]);
    if (tls.allowInsecure) params.push(['allowInsecure', '1']);
  }
  const reality = realityOf(s);
  if (reality) {
    if (reality.sni) params.push(['sni', reality.sni]);
    params.push(['fp', reality.fingerprint], ['pbk', reality.publicKey]);
    if (reality.shortId) params.push(['sid', reality.shortId]);
    if (reality.spiderX) params.push(['spx', reality.spiderX]);
  }
  const http = httpTransport(s);
  if (http?.host) params.push(['host', http.host]);
  if (http) params.push(['path', http.path]);
  if (s.stream.network === 'tcp') params.push(['headerType', 'none']);
  if (s.stream.network === 'xhttp') params.push(['mode', xhttpMode(s)]);
  if (s.stream.network === 'grpc') {
    const grpc = grpcOf(s);
    params.push(['serviceName', grpc.serviceName], ['mode', grpc.multiMode ? 'multi' : 'gun']);
  }
  return params;
}

/** v2rayN's vmess JSON, version 2: all values are strings (v2rayN writes port and aid as strings too). */
function vmessJson(s: ServerEntry): Record<string, string> {
  const http = httpTransport(s);
  const grpc = grpcOf(s);
  const tls = tlsOf(s);
  const network = s.stream.network;
  const json: Record<string, string> = {
    v: '2',
    ps: s.name,
    add: s.address,
    port: String(s.port),
    id: s.uuid ?? '',
    aid: '0',
    scy: 'auto',
    net: network,
    // grpc: gun | multi; xhttp: its mode (v2rayN keeps both in `type`); otherwise no header obfuscation.
    type: network === 'grpc' ? (grpc.multiMode ? 'multi' : 'gun') : network === 'xhttp' ? xhttpMode(s) : 'none',
    host: http?.host ?? '',
    path: network === 'grpc' ? grpc.serviceName : (http?.path ?? ''),
    tls: tls ? 'tls' : '',
    sni: tls?.sni ?? '',
    alpn: tls?.alpn.join(',') ?? '',
    fp: tls?.fingerprint ?? '',
  };
  if (tls?.allowInsecure) json.insecure = '1';
  return json;
}

/** SIP002 userinfo: base64url for classic methods, percent-encoded method:password for SIP022 (2022-blake3-*). */
function ssUserinfo(method: string, password: string): string {
  if (isShadowsocks2022(method)) return `${encodeURIComponent(method)}:${encodeURIComponent(password)}`;
  return base64url(`${method}:${password}`);
}
