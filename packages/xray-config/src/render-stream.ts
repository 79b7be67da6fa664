import { Network, type RealitySettings, SecurityT, type StreamSettings, type TlsSettings, XhttpMode } from '@svc/proto';
import { type JsonObject, type RenderOptions, XrayConfigError } from './xray-json.ts';

/* StreamSettings -> Xray's streamSettings: the transport, and TLS or REALITY as a server (inbounds) or a client (a chain's outbounds) sees them. */

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

export function renderStream(
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
