/**
 * Share links read as a client app reads them, written apart from our renderer
 * (packages/sub-formats) so that an end-to-end test checks the links against an independent
 * reading: a renderer and a parser sharing a mistake would agree with each other and fail every
 * real app. The forms read are the ones v2rayN/v2rayNG import:
 *
 * - `vmess://` + base64 of v2rayN's JSON (version 2: add, port, id, aid, scy, net, type, host,
 *   path, tls, sni, alpn, fp; values may be strings or numbers);
 * - `vless://uuid@host:port?type=&security=&sni=&host=&path=&...#name` and the same shape for
 *   `trojan://password@...` (whose security defaults to tls);
 * - `ss://` SIP002: `base64url(method:password)@host:port`, or a percent-encoded
 *   `method:password` userinfo (SIP022), or the legacy whole-base64 `method:password@host:port`.
 */

export type ShareLinkProtocol = 'vmess' | 'vless' | 'trojan' | 'shadowsocks';

export interface ShareLink {
  protocol: ShareLinkProtocol;
  /** The remark (fragment, or vmess `ps`). */
  name: string;
  /** Host name or IP (IPv6 without brackets). */
  address: string;
  port: number;
  /** vmess, vless: the user id. */
  id?: string;
  /** trojan, shadowsocks. */
  password?: string;
  /** shadowsocks: the cipher; vmess: its `scy` (default auto). */
  method?: string;
  /** vless: '' when none. */
  flow?: string;
  /** tcp, ws, grpc, httpupgrade, xhttp... as the link names it. */
  network: string;
  /** 'none', 'tls' or 'reality'. */
  security: string;
  /** Transport Host header ('' when none). */
  host: string;
  /** Transport path, or the gRPC service name ('' when none). */
  path: string;
  /** tcp header type ('none' unless the link says otherwise). */
  headerType: string;
  sni: string;
  alpn: string[];
  fingerprint: string;
  allowInsecure: boolean;
}

/** Standard or URL-safe base64, padded or not; throws on anything else. */
function decodeBase64(text: string, what: string): string {
  const compact = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact)) throw new Error(`${what} is not base64`);
  return Buffer.from(compact.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
}

/** `host:port` or `[v6]:port`. */
function hostPort(text: string, link: string): { address: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d+)$/.exec(text);
  if (!m) throw new Error(`no host:port in ${link}`);
  return { address: (m[1] ?? m[2]) as string, port: portOf(m[3] as string, link) };
}

function portOf(value: unknown, link: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error(`bad port ${String(value)} in ${link}`);
  return port;
}

const truthy = (v: unknown) => v === true || v === 1 || v === '1' || v === 'true';
const list = (v: unknown) =>
  String(v ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);

function parseVmess(link: string): ShareLink {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(decodeBase64(link.slice('vmess://'.length), 'the vmess:// body'));
  } catch (err) {
    throw new Error(`not a v2rayN vmess link (${(err as Error).message}): ${link}`);
  }
  const str = (k: string) => (json[k] === undefined || json[k] === null ? '' : String(json[k]));
  const tls = str('tls');
  return {
    protocol: 'vmess',
    name: str('ps'),
    address: str('add'),
    port: portOf(json.port, link),
    id: str('id'),
    method: str('scy') || 'auto',
    network: str('net') || 'tcp',
    security: tls === '' || tls === 'none' ? 'none' : tls,
    host: str('host'),
    path: str('path'),
    headerType: str('type') || 'none',
    sni: str('sni'),
    alpn: list(json.alpn),
    fingerprint: str('fp'),
    allowInsecure: truthy(json.allowInsecure) || truthy(json.insecure),
  };
}

/** vless:// and trojan://: credentials in the userinfo, everything else in the query. */
function parseUrlStyle(link: string, protocol: 'vless' | 'trojan'): ShareLink {
  const url = new URL(link);
  const q = (k: string) => url.searchParams.get(k) ?? '';
  const secret = decodeURIComponent(url.username);
  if (!secret) throw new Error(`no ${protocol === 'vless' ? 'uuid' : 'password'} in ${link}`);
  const network = q('type') || 'tcp';
  return {
    protocol,
    name: decodeURIComponent(url.hash.slice(1)),
    address: url.hostname.replace(/^\[|\]$/g, ''),
    port: portOf(url.port, link),
    ...(protocol === 'vless' ? { id: secret, flow: q('flow') } : { password: secret }),
    network,
    security: q('security') || (protocol === 'trojan' ? 'tls' : 'none'),
    host: q('host'),
    path: network === 'grpc' ? q('serviceName') : q('path'),
    headerType: q('headerType') || 'none',
    sni: q('sni') || q('peer'),
    alpn: list(q('alpn')),
    fingerprint: q('fp'),
    allowInsecure: truthy(q('allowInsecure')) || truthy(q('insecure')),
  };
}

function parseShadowsocks(link: string): ShareLink {
  const [body = '', fragment = ''] = link.slice('ss://'.length).split('#', 2);
  const beforeQuery = body.split('?', 1)[0]?.replace(/\/$/, '') ?? '';
  // SIP002 has an @; the legacy form is base64 of the whole `method:password@host:port`.
  const plain = beforeQuery.includes('@') ? beforeQuery : decodeBase64(beforeQuery, 'the ss:// body');
  const at = plain.lastIndexOf('@');
  if (at < 0) throw new Error(`no @ in ${link}`);
  const userinfo = plain.slice(0, at);
  const credentials = userinfo.includes(':') ? decodeURIComponent(userinfo) : decodeBase64(userinfo, 'the ss:// userinfo');
  const colon = credentials.indexOf(':');
  if (colon < 1) throw new Error(`no method:password in ${link}`);
  return {
    protocol: 'shadowsocks',
    name: decodeURIComponent(fragment),
    ...hostPort(plain.slice(at + 1), link),
    method: credentials.slice(0, colon),
    password: credentials.slice(colon + 1),
    network: 'tcp',
    security: 'none',
    host: '',
    path: '',
    headerType: 'none',
    sni: '',
    alpn: [],
    fingerprint: '',
    allowInsecure: false,
  };
}

/** One link as an app reads it; throws naming the link when it cannot be read. */
export function parseShareLink(link: string): ShareLink {
  const scheme = /^([a-z0-9]+):\/\//i.exec(link)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'vmess':
      return parseVmess(link);
    case 'vless':
    case 'trojan':
      return parseUrlStyle(link, scheme);
    case 'ss':
      return parseShadowsocks(link);
    default:
      throw new Error(`not a share link this parser reads: ${link.slice(0, 40)}`);
  }
}

/** A subscription body of the base64 kind (GET /sub/{token} for a share-link app): its links, in order. */
export function decodeSubscriptionBody(text: string): string[] {
  return decodeBase64(text.trim(), 'the subscription body')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
}
