import {
  type Inbound,
  type InboundUser,
  Network,
  type NodeConfig,
  type Outbound,
  Protocol,
  type RealitySettings,
  type RoutingRule,
  SecurityT,
  type ShadowsocksAccount,
  type StreamSettings,
  type TlsSettings,
  XhttpMode,
} from '@svc/proto';

/**
 * NodeConfig -> Xray-core JSON configuration. Pure and deterministic: the output is built from
 * object literals in a fixed key order, lists keep the order of the NodeConfig, and the only
 * map in the contract (WebSocket headers) is emitted sorted by name, so the same NodeConfig
 * always gives byte-identical `JSON.stringify` output.
 *
 * The contract carries no file paths: `certificatePaths` tells where the agent wrote the PEM
 * files of a certificate (NodeConfig.certificates[].id).
 */

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The rendered configuration; a plain JSON-serializable object. */
export interface XrayJson {
  [key: string]: Json | undefined;
  log: JsonObject;
  api?: JsonObject;
  stats?: JsonObject;
  policy?: JsonObject;
  inbounds: JsonObject[];
  outbounds: JsonObject[];
  routing: JsonObject;
}

export type XrayLogLevel = 'debug' | 'info' | 'warning' | 'error' | 'none';

export interface CertificateFiles {
  /** PEM certificate (full chain) file. */
  certFile: string;
  /** PEM private key file. */
  keyFile: string;
}

export interface RenderOptions {
  /** Where the agent wrote the PEM files of NodeConfig.certificates[] with this id. */
  certificatePaths: (certificateId: string) => CertificateFiles;
  /** `log.loglevel`; default `warning`. */
  logLevel?: XrayLogLevel;
  /**
   * When set: per-user traffic statistics (`stats`, `policy` level 0 with user uplink and
   * downlink counters) and the gRPC API (`StatsService`, `HandlerService`) on an `api`
   * dokodemo-door inbound at 127.0.0.1:apiPort, routed to the `api` outbound Xray creates.
   */
  apiPort?: number;
}

/** Tag of the API inbound and of the outbound Xray creates for the API. */
export const API_TAG = 'api';
/** Listen address of the API inbound: loopback only. */
export const API_LISTEN = '127.0.0.1';

/** A NodeConfig that cannot be turned into a working Xray configuration; `path` locates the part. */
export class XrayConfigError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'XrayConfigError';
  }
}

const PROTOCOL_NAME: Partial<Record<Protocol, string>> = {
  [Protocol.VLESS]: 'vless',
  [Protocol.VMESS]: 'vmess',
  [Protocol.TROJAN]: 'trojan',
  [Protocol.SHADOWSOCKS]: 'shadowsocks',
  [Protocol.FREEDOM]: 'freedom',
  [Protocol.BLACKHOLE]: 'blackhole',
};

/**
 * Transport names. TCP is emitted as "tcp": Xray renamed it to "raw" in v24.9.30 but keeps
 * "tcp"/"tcpSettings" as aliases, and "tcp" is the only name v2ray (our independent config
 * checker) knows.
 */
const NETWORK_NAME: Partial<Record<Network, string>> = {
  [Network.TCP]: 'tcp',
  [Network.WS]: 'ws',
  [Network.GRPC]: 'grpc',
  [Network.HTTPUPGRADE]: 'httpupgrade',
  [Network.XHTTP]: 'xhttp',
};

const SECURITY_NAME: Partial<Record<SecurityT, string>> = {
  [SecurityT.NONE]: 'none',
  [SecurityT.TLS]: 'tls',
  [SecurityT.REALITY]: 'reality',
};

/** Xray's XHTTP modes are hyphenated; an unspecified mode is Xray's default, auto. */
const XHTTP_MODE_NAME: Partial<Record<XhttpMode, string>> = {
  [XhttpMode.XHTTP_MODE_UNSPECIFIED]: 'auto',
  [XhttpMode.AUTO]: 'auto',
  [XhttpMode.PACKET_UP]: 'packet-up',
  [XhttpMode.STREAM_UP]: 'stream-up',
  [XhttpMode.STREAM_ONE]: 'stream-one',
};

/** Which transport oneof member belongs to which network. */
const TRANSPORT_FIELD: Record<string, keyof StreamSettings> = {
  tcp: 'tcp',
  ws: 'ws',
  grpc: 'grpc',
  httpupgrade: 'httpupgrade',
  xhttp: 'xhttp',
};

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Shadowsocks 2022 (SIP022) methods: `2022-blake3-*`. */
export const isShadowsocks2022 = (method: string): boolean => method.startsWith('2022-');

/**
 * Renders the Xray JSON configuration of a NodeConfig. Throws XrayConfigError for input Xray
 * would reject or could not run as intended (see README: Shadowsocks 2022 needs a server key).
 */
export function renderXrayConfig(config: NodeConfig, opts: RenderOptions): XrayJson {
  const xray = config.xray ?? { inbounds: [], outbounds: [], routingRules: [] };
  const certificateIds = new Set(config.certificates.map((c) => c.id));
  const withApi = opts.apiPort !== undefined;
  if (withApi) {
    const port = opts.apiPort as number;
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new XrayConfigError('apiPort', `not a TCP port: ${port}`);
  }

  checkUniqueTags('inbounds', xray.inbounds, withApi);
  checkUniqueTags('outbounds', xray.outbounds, withApi);

  const inbounds: JsonObject[] = [];
  if (withApi)
    inbounds.push({
      tag: API_TAG,
      listen: API_LISTEN,
      port: opts.apiPort as number,
      protocol: 'dokodemo-door',
      settings: { address: API_LISTEN },
    });
  for (const [index, inbound] of xray.inbounds.entries())
    inbounds.push(renderInbound(`inbounds[${index}](${inbound.tag})`, inbound, opts, certificateIds));

  const outbounds = xray.outbounds.map((o, index) => renderOutbound(`outbounds[${index}](${o.tag})`, o));

  const outboundTags = new Set(xray.outbounds.map((o) => o.tag));
  const rules: JsonObject[] = [];
  if (withApi) rules.push({ type: 'field', inboundTag: [API_TAG], outboundTag: API_TAG });
  for (const [index, rule] of xray.routingRules.entries()) rules.push(renderRule(`routingRules[${index}]`, rule, outboundTags));

  const log = { loglevel: opts.logLevel ?? 'warning' };
  const routing = { domainStrategy: 'AsIs', rules };
  if (!withApi) return { log, inbounds, outbounds, routing };
  return {
    log,
    api: { tag: API_TAG, services: ['StatsService', 'HandlerService'] },
    stats: {},
    policy: { levels: { '0': { statsUserUplink: true, statsUserDownlink: true } } },
    inbounds,
    outbounds,
    routing,
  };
}

function checkUniqueTags(path: string, items: Array<{ tag: string }>, withApi: boolean): void {
  const seen = new Set<string>();
  for (const [index, { tag }] of items.entries()) {
    if (tag === '') throw new XrayConfigError(`${path}[${index}]`, 'empty tag');
    if (seen.has(tag)) throw new XrayConfigError(`${path}[${index}]`, `duplicate tag ${JSON.stringify(tag)}`);
    if (withApi && tag === API_TAG) throw new XrayConfigError(`${path}[${index}]`, `tag "${API_TAG}" is reserved for the stats API`);
    seen.add(tag);
  }
}

// ---------------------------------------------------------------------------
// Inbounds
// ---------------------------------------------------------------------------

function renderInbound(path: string, i: Inbound, opts: RenderOptions, certificateIds: Set<string>): JsonObject {
  const protocol = PROTOCOL_NAME[i.protocol];
  if (!protocol || i.protocol === Protocol.FREEDOM || i.protocol === Protocol.BLACKHOLE)
    throw new XrayConfigError(path, `unsupported inbound protocol ${Protocol[i.protocol] ?? i.protocol}`);
  if (!Number.isInteger(i.port) || i.port < 1 || i.port > 65535) throw new XrayConfigError(path, `not a TCP port: ${i.port}`);

  let settings: JsonObject;
  switch (i.protocol) {
    case Protocol.VLESS:
      settings = {
        clients: i.users.map((u, k) => {
          const a = account(`${path}.users[${k}]`, u, 'vless');
          return withEmail({ id: a.id, ...(a.flow ? { flow: a.flow } : {}) }, u.email);
        }),
        decryption: 'none',
      };
      break;
    case Protocol.VMESS:
      settings = { clients: i.users.map((u, k) => withEmail({ id: account(`${path}.users[${k}]`, u, 'vmess').id }, u.email)) };
      break;
    case Protocol.TROJAN:
      settings = {
        clients: i.users.map((u, k) => withEmail({ password: account(`${path}.users[${k}]`, u, 'trojan').password }, u.email)),
      };
      break;
    default:
      settings = shadowsocksInbound(path, i.users);
  }

  const out: JsonObject = { tag: i.tag };
  if (i.listen !== '') out.listen = i.listen;
  out.port = i.port;
  out.protocol = protocol;
  out.settings = settings;
  if (i.stream) out.streamSettings = renderStream(`${path}.stream`, i.stream, 'server', opts, certificateIds);
  if (i.sniffing)
    out.sniffing = { enabled: i.sniffing.enabled, destOverride: [...i.sniffing.destOverride], routeOnly: i.sniffing.routeOnly };
  return out;
}

function withEmail(client: JsonObject, email: string): JsonObject {
  return email === '' ? client : { ...client, email };
}

type AccountKind = 'vless' | 'vmess' | 'trojan' | 'shadowsocks';

function account<K extends AccountKind>(path: string, u: InboundUser, kind: K): NonNullable<InboundUser[K]> {
  const a = u[kind];
  if (!a) throw new XrayConfigError(path, `user ${JSON.stringify(u.email)} has no ${kind} account`);
  return a as NonNullable<InboundUser[K]>;
}

/**
 * Shadowsocks inbound settings. The method lives in the users' accounts only (NodeConfig has no
 * inbound-level method or key).
 *
 * - No users: `clients: []` and no method. Xray then builds a classic (non-2022) server without
 *   users, which accepts nobody. (Never a settings-level password: Xray turns a 2022 inbound
 *   without clients into a single-user server keyed by it.)
 * - Classic AEAD, one user: the single-user layout (settings-level method, password, email),
 *   the one both Xray and v2ray accept.
 * - Classic AEAD, several users: per-client method and password in `clients` (Xray's
 *   multi-user layout; v2ray has none).
 * - 2022, users whose password is `<server key>:<user key>` (the form a SIP022 multi-user
 *   client sends; one server key per inbound): Xray's multi-user layout, settings-level method
 *   and server key, clients with their user key and no method. Xray supports it only for the
 *   blake3-aes methods.
 * - 2022, one user with a plain key: the single-user layout.
 * - 2022, several users with plain keys: XrayConfigError. Xray cannot serve them without a
 *   server key, which NodeConfig does not carry.
 */
function shadowsocksInbound(path: string, users: InboundUser[]): JsonObject {
  const accounts: ShadowsocksAccount[] = users.map((u, k) => account(`${path}.users[${k}]`, u, 'shadowsocks'));
  for (const [k, a] of accounts.entries()) {
    if (a.method === '') throw new XrayConfigError(`${path}.users[${k}]`, 'empty shadowsocks method');
    if (a.password === '') throw new XrayConfigError(`${path}.users[${k}]`, 'empty shadowsocks password');
  }
  const network = 'tcp,udp';
  if (accounts.length === 0) return { clients: [], network };
  const is2022 = accounts.some((a) => isShadowsocks2022(a.method));

  if (!is2022) {
    const only = accounts.length === 1 ? (accounts[0] as ShadowsocksAccount) : undefined;
    if (only) return { ...withEmail({ method: only.method, password: only.password }, (users[0] as InboundUser).email), network };
    return {
      clients: accounts.map((a, k) => withEmail({ method: a.method, password: a.password }, (users[k] as InboundUser).email)),
      network,
    };
  }

  const method = (accounts[0] as ShadowsocksAccount).method;
  for (const [k, a] of accounts.entries())
    if (a.method !== method)
      throw new XrayConfigError(
        `${path}.users[${k}]`,
        `a Shadowsocks 2022 inbound takes one method for all users (${method}, not ${a.method})`,
      );

  const split = accounts.map((a) => a.password.split(':'));
  const colon = split.filter((parts) => parts.length > 1).length;
  if (colon === 0) {
    if (accounts.length === 1)
      return { ...withEmail({ method, password: (accounts[0] as ShadowsocksAccount).password }, (users[0] as InboundUser).email), network };
    throw new XrayConfigError(
      path,
      `Shadowsocks 2022 with ${accounts.length} users needs the inbound's server key: give each user's password as <server key>:<user key>`,
    );
  }
  if (colon !== accounts.length)
    throw new XrayConfigError(path, 'every Shadowsocks 2022 user password, or none, must be <server key>:<user key>');
  const serverKey = (split[0] as string[])[0] as string;
  for (const [k, parts] of split.entries()) {
    if (parts.length !== 2 || parts[0] === '' || parts[1] === '')
      throw new XrayConfigError(`${path}.users[${k}]`, 'a Shadowsocks 2022 password is <server key>:<user key>');
    if (parts[0] !== serverKey)
      throw new XrayConfigError(`${path}.users[${k}]`, 'users of one Shadowsocks 2022 inbound share one server key');
  }
  if (!method.includes('aes'))
    throw new XrayConfigError(path, `Xray serves several Shadowsocks 2022 users only with the blake3-aes methods, not ${method}`);
  return {
    method,
    password: serverKey,
    clients: split.map((parts, k) => withEmail({ password: parts[1] as string }, (users[k] as InboundUser).email)),
    network,
  };
}

// ---------------------------------------------------------------------------
// Outbounds
// ---------------------------------------------------------------------------

function renderOutbound(path: string, o: Outbound): JsonObject {
  const protocol = PROTOCOL_NAME[o.protocol];
  switch (o.protocol) {
    case Protocol.FREEDOM:
    case Protocol.BLACKHOLE:
      return { tag: o.tag, protocol: protocol as string };
    case Protocol.VLESS:
    case Protocol.TROJAN:
    case Protocol.SHADOWSOCKS:
      break;
    default:
      throw new XrayConfigError(path, `unsupported outbound protocol ${Protocol[o.protocol] ?? o.protocol}`);
  }
  if (o.address === '') throw new XrayConfigError(path, 'empty next-hop address');
  if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535) throw new XrayConfigError(path, `not a TCP port: ${o.port}`);

  let settings: JsonObject;
  if (o.protocol === Protocol.VLESS) {
    if (!o.vless) throw new XrayConfigError(path, 'vless outbound without a vless account');
    const user: JsonObject = { id: o.vless.id, encryption: 'none' };
    if (o.vless.flow) user.flow = o.vless.flow;
    settings = { vnext: [{ address: o.address, port: o.port, users: [user] }] };
  } else if (o.protocol === Protocol.TROJAN) {
    if (!o.trojan) throw new XrayConfigError(path, 'trojan outbound without a trojan account');
    settings = { servers: [{ address: o.address, port: o.port, password: o.trojan.password }] };
  } else {
    if (!o.shadowsocks) throw new XrayConfigError(path, 'shadowsocks outbound without a shadowsocks account');
    // For 2022 methods the password goes as is: a single key, or <server key>:<user key>.
    settings = { servers: [{ address: o.address, port: o.port, method: o.shadowsocks.method, password: o.shadowsocks.password }] };
  }
  const out: JsonObject = { tag: o.tag, protocol: protocol as string, settings };
  if (o.stream) out.streamSettings = renderStream(`${path}.stream`, o.stream, 'client', undefined, undefined);
  return out;
}

// ---------------------------------------------------------------------------
// Stream settings
// ---------------------------------------------------------------------------

function renderStream(
  path: string,
  s: StreamSettings,
  side: 'server' | 'client',
  opts: RenderOptions | undefined,
  certificateIds: Set<string> | undefined,
): JsonObject {
  const network = NETWORK_NAME[s.network];
  if (!network) throw new XrayConfigError(path, `unsupported network ${Network[s.network] ?? s.network}`);
  const security = SECURITY_NAME[s.security];
  if (!security) throw new XrayConfigError(path, `unsupported security ${SecurityT[s.security] ?? s.security}`);

  for (const [name, field] of Object.entries(TRANSPORT_FIELD))
    if (name !== network && s[field] !== undefined) throw new XrayConfigError(path, `${field} settings given for network ${network}`);
  if (s.tlsSettings && s.security !== SecurityT.TLS) throw new XrayConfigError(path, `tls_settings given for security ${security}`);
  if (s.reality && s.security !== SecurityT.REALITY) throw new XrayConfigError(path, `reality settings given for security ${security}`);
  if (s.security === SecurityT.REALITY && s.network !== Network.TCP && s.network !== Network.GRPC && s.network !== Network.XHTTP)
    throw new XrayConfigError(path, `REALITY works only with tcp, grpc and xhttp, not ${network}`);

  const out: JsonObject = { network, security };
  if (s.tcp) out.tcpSettings = { acceptProxyProtocol: s.tcp.acceptProxyProtocol };
  if (s.ws) {
    const ws: JsonObject = { path: s.ws.path };
    const names = Object.keys(s.ws.headers).sort(byString);
    if (names.length > 0) ws.headers = Object.fromEntries(names.map((n) => [n, s.ws?.headers[n] as string]));
    out.wsSettings = ws;
  }
  if (s.grpc) out.grpcSettings = { serviceName: s.grpc.serviceName, multiMode: s.grpc.multiMode };
  if (s.httpupgrade) out.httpupgradeSettings = { path: s.httpupgrade.path, ...(s.httpupgrade.host ? { host: s.httpupgrade.host } : {}) };
  if (s.xhttp) {
    const mode = XHTTP_MODE_NAME[s.xhttp.mode];
    if (!mode) throw new XrayConfigError(path, `unsupported xhttp mode ${s.xhttp.mode}`);
    out.xhttpSettings = { path: s.xhttp.path, ...(s.xhttp.host ? { host: s.xhttp.host } : {}), mode };
  }

  if (s.security === SecurityT.TLS) {
    if (side === 'server') {
      if (!s.tlsSettings) throw new XrayConfigError(path, 'security tls without tls_settings (the server needs a certificate)');
      out.tlsSettings = serverTls(`${path}.tls_settings`, s.tlsSettings, opts as RenderOptions, certificateIds as Set<string>);
    } else if (s.tlsSettings) out.tlsSettings = clientTls(s.tlsSettings);
  }
  if (s.security === SecurityT.REALITY) {
    if (!s.reality) throw new XrayConfigError(path, 'security reality without reality settings');
    out.realitySettings = side === 'server' ? serverReality(`${path}.reality`, s.reality) : clientReality(`${path}.reality`, s.reality);
  }
  return out;
}

/** "h2, http/1.1" -> ["h2", "http/1.1"]; empty -> undefined (Xray's default, h2 and http/1.1). */
function alpnList(alpn: string): string[] | undefined {
  const list = alpn
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  return list.length > 0 ? list : undefined;
}

function serverTls(path: string, t: TlsSettings, opts: RenderOptions, certificateIds: Set<string>): JsonObject {
  if (t.certificateId === '') throw new XrayConfigError(path, 'no certificate_id');
  if (!certificateIds.has(t.certificateId))
    throw new XrayConfigError(path, `certificate ${JSON.stringify(t.certificateId)} is not in NodeConfig.certificates`);
  const files = opts.certificatePaths(t.certificateId);
  const out: JsonObject = {};
  if (t.serverNames[0]) out.serverName = t.serverNames[0];
  const alpn = alpnList(t.alpn);
  if (alpn) out.alpn = alpn;
  if (t.minVersion) out.minVersion = t.minVersion;
  out.certificates = [{ certificateFile: files.certFile, keyFile: files.keyFile }];
  return out;
}

function clientTls(t: TlsSettings): JsonObject {
  const out: JsonObject = {};
  if (t.serverNames[0]) out.serverName = t.serverNames[0];
  const alpn = alpnList(t.alpn);
  if (alpn) out.alpn = alpn;
  if (t.minVersion) out.minVersion = t.minVersion;
  return out;
}

/** Server side: `dest` (Xray >= 24.12 also calls it `target`) marks the settings as a server's; no fingerprint or public key. */
function serverReality(path: string, r: RealitySettings): JsonObject {
  if (r.dest === '') throw new XrayConfigError(path, 'empty dest');
  if (r.serverNames.length === 0) throw new XrayConfigError(path, 'no server names');
  if (r.privateKey === '') throw new XrayConfigError(path, 'empty private key');
  if (r.shortIds.length === 0) throw new XrayConfigError(path, 'no short ids');
  return { show: false, dest: r.dest, serverNames: [...r.serverNames], privateKey: r.privateKey, shortIds: [...r.shortIds] };
}

/** Client side (an outbound to a REALITY next hop): one server name and short id, the public key, a fingerprint. */
function clientReality(path: string, r: RealitySettings): JsonObject {
  if (r.publicKey === '') throw new XrayConfigError(path, 'empty public key');
  if (r.fingerprint === '') throw new XrayConfigError(path, 'empty fingerprint (a REALITY client needs one)');
  return {
    show: false,
    fingerprint: r.fingerprint,
    serverName: r.serverNames[0] ?? '',
    publicKey: r.publicKey,
    shortId: r.shortIds[0] ?? '',
  };
}

// ---------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------

function renderRule(path: string, r: RoutingRule, outboundTags: Set<string>): JsonObject {
  if (r.inboundTag === '') throw new XrayConfigError(path, 'empty inbound tag');
  if (!outboundTags.has(r.outboundTag)) throw new XrayConfigError(path, `no outbound tagged ${JSON.stringify(r.outboundTag)}`);
  const out: JsonObject = { type: 'field', inboundTag: [r.inboundTag], outboundTag: r.outboundTag };
  if (r.protocols.length > 0) out.protocol = [...r.protocols];
  return out;
}
