import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * Stream settings of an inbound profile (spec 2.1 StreamSettings, snake_case). The HTTP layer
 * checks shapes and enums; this module holds the rules that span fields, the defaults, and
 * the REALITY keys.
 */
export const NETWORKS = ['tcp', 'ws', 'grpc', 'httpupgrade', 'xhttp'] as const;
export type Network = (typeof NETWORKS)[number];
export const SECURITIES = ['none', 'tls', 'reality'] as const;
export type Security = (typeof SECURITIES)[number];
export const XHTTP_MODES = ['auto', 'packet_up', 'stream_up', 'stream_one'] as const;
export const TLS_VERSIONS = ['1.0', '1.1', '1.2', '1.3'] as const;
export const REALITY_FINGERPRINTS = ['chrome', 'firefox', 'safari', 'ios', 'android', 'edge', '360', 'qq', 'random', 'randomized'] as const;
/** Networks REALITY works with in Xray. */
export const REALITY_NETWORKS: readonly Network[] = ['tcp', 'grpc', 'xhttp'];

export interface TcpSettings {
  accept_proxy_protocol: boolean;
}
export interface WsSettings {
  path: string;
  headers: Record<string, string>;
}
export interface GrpcSettings {
  service_name: string;
  multi_mode: boolean;
}
export interface HttpUpgradeSettings {
  path: string;
  host: string;
}
export interface XhttpSettings {
  path: string;
  host: string;
  mode: (typeof XHTTP_MODES)[number];
}
export interface TlsSettings {
  server_names: string[];
  alpn: string;
  min_version: (typeof TLS_VERSIONS)[number];
  certificate_id: string;
}
/** Stored form: the private key lives sealed in its own column, never here. */
export interface RealitySettings {
  dest: string;
  server_names: string[];
  public_key: string;
  short_ids: string[];
  fingerprint: (typeof REALITY_FINGERPRINTS)[number];
}

export interface StoredStream {
  network: Network;
  security: Security;
  tcp?: TcpSettings;
  ws?: WsSettings;
  grpc?: GrpcSettings;
  httpupgrade?: HttpUpgradeSettings;
  xhttp?: XhttpSettings;
  tls?: TlsSettings;
  reality?: RealitySettings;
}

type Partialish<T> = { [K in keyof T]?: T[K] | undefined };

export interface StreamInput {
  network: Network;
  security: Security;
  tcp?: Partialish<TcpSettings> | undefined;
  ws?: Partialish<WsSettings> | undefined;
  grpc?: Partialish<GrpcSettings> | undefined;
  httpupgrade?: Partialish<HttpUpgradeSettings> | undefined;
  xhttp?: Partialish<XhttpSettings> | undefined;
  tls?: (Partialish<Omit<TlsSettings, 'certificate_id'>> & { certificate_id: string }) | undefined;
  reality?:
    | (Partialish<Omit<RealitySettings, 'dest'>> & {
        dest: string;
        /** X25519 private key, base64url (as `xray x25519` prints it); generated when absent. */
        private_key?: string | undefined;
      })
    | undefined;
}

/** The REALITY key kept from the profile being edited, if any. */
export interface CurrentReality {
  privateKey: string | null;
  shortIds: string[] | null;
}

export interface ResolvedStream {
  stream: StoredStream;
  /** Plain REALITY private key to seal, or null when security is not reality. */
  realityPrivateKey: string | null;
  certificateId: string | null;
}

const HOST_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;
const ALPN_TOKENS = new Set(['h3', 'h2', 'http/1.1']);

export const isHostname = (s: string): boolean => HOST_RE.test(s);
/** A host name, or a wildcard one (`*.example.com`): names a certificate covers. */
export const isDomainName = (s: string): boolean => HOST_RE.test(s.startsWith('*.') ? s.slice(2) : s);
export const isHostOrIp = (s: string): boolean => isHostname(s) || isIP(s.replace(/^\[(.*)\]$/, '$1')) !== 0;

/**
 * Checks the rules that span fields and fills the defaults of the chosen network's settings.
 * Returns errors per field (dot paths under `stream.`), or the stream to store.
 */
export function resolveStream(input: StreamInput, current: CurrentReality): { errors: Record<string, string>; resolved?: ResolvedStream } {
  const errors: Record<string, string> = {};
  const { network, security } = input;

  for (const n of NETWORKS) {
    if (n !== network && input[n] !== undefined) errors[`stream.${n}`] = `only allowed when stream.network is ${n}`;
  }
  if (input.tls !== undefined && security !== 'tls') errors['stream.tls'] = 'only allowed when stream.security is tls';
  if (input.reality !== undefined && security !== 'reality') errors['stream.reality'] = 'only allowed when stream.security is reality';
  if (security === 'tls' && input.tls === undefined) errors['stream.tls'] = 'required when stream.security is tls';
  if (security === 'reality' && input.reality === undefined) errors['stream.reality'] = 'required when stream.security is reality';
  if (security === 'reality' && !REALITY_NETWORKS.includes(network))
    errors['stream.security'] = `reality works only with ${REALITY_NETWORKS.join(', ')} (stream.network is ${network})`;

  const stream: StoredStream = { network, security };
  const path = (p: string | undefined, field: string): string => {
    const v = p ?? '/';
    if (!v.startsWith('/')) errors[field] = 'must start with /';
    return v;
  };
  const host = (h: string | undefined, field: string): string => {
    const v = h ?? '';
    if (v !== '' && !isHostOrIp(v)) errors[field] = 'must be a host name or an IP address';
    return v;
  };

  switch (network) {
    case 'tcp':
      stream.tcp = { accept_proxy_protocol: input.tcp?.accept_proxy_protocol ?? false };
      break;
    case 'ws': {
      const headers = input.ws?.headers ?? {};
      for (const name of Object.keys(headers)) {
        if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) errors[`stream.ws.headers.${name}`] = 'not a valid header name';
      }
      stream.ws = { path: path(input.ws?.path, 'stream.ws.path'), headers };
      break;
    }
    case 'grpc':
      if (input.grpc === undefined) errors['stream.grpc'] = 'required when stream.network is grpc (service_name)';
      else if (!input.grpc.service_name) errors['stream.grpc.service_name'] = 'required';
      stream.grpc = { service_name: input.grpc?.service_name ?? '', multi_mode: input.grpc?.multi_mode ?? false };
      break;
    case 'httpupgrade':
      stream.httpupgrade = {
        path: path(input.httpupgrade?.path, 'stream.httpupgrade.path'),
        host: host(input.httpupgrade?.host, 'stream.httpupgrade.host'),
      };
      break;
    case 'xhttp':
      stream.xhttp = {
        path: path(input.xhttp?.path, 'stream.xhttp.path'),
        host: host(input.xhttp?.host, 'stream.xhttp.host'),
        mode: input.xhttp?.mode ?? 'auto',
      };
      break;
  }

  let realityPrivateKey: string | null = null;
  let certificateId: string | null = null;
  if (security === 'tls' && input.tls !== undefined) {
    const t = input.tls;
    const serverNames = dedupe(t.server_names ?? []);
    serverNames.forEach((n, i) => {
      if (!isHostname(n)) errors[`stream.tls.server_names.${i}`] = 'must be a host name';
    });
    const alpn = t.alpn ?? '';
    if (alpn !== '' && !alpn.split(',').every((a) => ALPN_TOKENS.has(a.trim())))
      errors['stream.tls.alpn'] = 'comma-separated list of h3, h2, http/1.1';
    stream.tls = {
      server_names: serverNames,
      alpn: alpn
        .split(',')
        .map((a) => a.trim())
        .filter(Boolean)
        .join(','),
      min_version: t.min_version ?? '1.2',
      certificate_id: t.certificate_id,
    };
    certificateId = t.certificate_id;
  }
  if (security === 'reality' && input.reality !== undefined) {
    const r = input.reality;
    if (!isRealityDest(r.dest)) errors['stream.reality.dest'] = 'host:port or a port (the site REALITY borrows the handshake of)';
    const serverNames = dedupe(r.server_names ?? []);
    if (serverNames.length === 0) errors['stream.reality.server_names'] = 'at least one server name';
    serverNames.forEach((n, i) => {
      if (!isHostname(n)) errors[`stream.reality.server_names.${i}`] = 'must be a host name';
    });
    const shortIds = r.short_ids !== undefined ? dedupe(r.short_ids) : (current.shortIds ?? [randomBytes(4).toString('hex')]);
    if (shortIds.length === 0) errors['stream.reality.short_ids'] = 'at least one short id';
    shortIds.forEach((s, i) => {
      if (!/^([0-9a-f]{2}){0,8}$/.test(s)) errors[`stream.reality.short_ids.${i}`] = 'up to 16 hex digits, even length';
    });
    let pair: { privateKey: string; publicKey: string } | null = null;
    if (r.private_key !== undefined) {
      pair = x25519FromPrivate(r.private_key);
      if (!pair) errors['stream.reality.private_key'] = 'not an X25519 private key (32 bytes, base64url)';
    } else if (current.privateKey) {
      pair = x25519FromPrivate(current.privateKey);
    }
    pair ??= generateX25519();
    if (r.public_key !== undefined && r.public_key !== pair.publicKey && !errors['stream.reality.private_key'])
      errors['stream.reality.public_key'] = 'does not belong to the private key (omit it: it is derived)';
    stream.reality = {
      dest: r.dest,
      server_names: serverNames,
      public_key: pair.publicKey,
      short_ids: shortIds,
      fingerprint: r.fingerprint ?? 'chrome',
    };
    realityPrivateKey = pair.privateKey;
  }

  if (Object.keys(errors).length > 0) return { errors };
  return { errors, resolved: { stream, realityPrivateKey, certificateId } };
}

function dedupe(values: readonly string[]): string[] {
  return [...new Set(values.map((v) => v.trim()))];
}

function isRealityDest(dest: string): boolean {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):)?(\d{1,5})$/.exec(dest);
  if (!m) return false;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return false;
  return m[1] === undefined || isHostOrIp(m[1]);
}

/** Raw 32-byte keys, base64url without padding: the format `xray x25519` prints and reads. */
export function generateX25519(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  return { privateKey: privateKey.export({ format: 'jwk' }).d as string, publicKey: publicKey.export({ format: 'jwk' }).x as string };
}

const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

/** Validates a raw X25519 private key (base64url or base64, padding optional) and derives the public key. */
export function x25519FromPrivate(key: string): { privateKey: string; publicKey: string } | null {
  const trimmed = key.trim();
  if (!/^[A-Za-z0-9_\-+/]{43}=?$/.test(trimmed)) return null;
  const raw = Buffer.from(trimmed.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'base64url');
  if (raw.length !== 32) return null;
  try {
    const priv = createPrivateKey({ key: Buffer.concat([PKCS8_X25519_PREFIX, raw]), format: 'der', type: 'pkcs8' });
    return { privateKey: raw.toString('base64url'), publicKey: createPublicKey(priv).export({ format: 'jwk' }).x as string };
  } catch {
    return null;
  }
}
