import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { StoredStream as DbStoredStream, StoredReality } from '@svc/db';
import type { RealitySpec, StreamSpec } from './stream-fields.ts';

/**
 * Stream settings of an inbound profile (spec 2.1 StreamSettings, snake_case). The input's
 * rules and defaults are the schema of stream-fields.ts; this module holds the value lists,
 * the stored form, and the REALITY keys (which depend on the profile being edited).
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
export const ALPN_TOKENS: readonly string[] = ['h3', 'h2', 'http/1.1'];

/** Stored form of REALITY: the private key lives sealed in its own column, never here. */
export type RealitySettings = StoredReality;

/**
 * Stored form: the stream as its schema leaves it, REALITY with its derived public key and its
 * short ids. The column's type (@svc/db inbound-stream.ts) is this shape; the checks below fail
 * to compile when the schema and the column drift apart.
 */
export type StoredStream = DbStoredStream;

type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type SchemaStored = Omit<StreamSpec, 'reality'> & {
  reality?: Omit<RealitySpec, 'private_key' | 'public_key' | 'short_ids'> & { public_key: string; short_ids: string[] };
};
const schemaIsColumn: Exactly<SchemaStored, DbStoredStream> = true;
const realityIsColumn: Exactly<NonNullable<SchemaStored['reality']>, StoredReality> = true;
void schemaIsColumn;
void realityIsColumn;

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

export const isHostname = (s: string): boolean => HOST_RE.test(s);
/** A host name, or a wildcard one (`*.example.com`): names a certificate covers. */
export const isDomainName = (s: string): boolean => HOST_RE.test(s.startsWith('*.') ? s.slice(2) : s);
export const isHostOrIp = (s: string): boolean => isHostname(s) || isIP(s.replace(/^\[(.*)\]$/, '$1')) !== 0;

/**
 * The stream to store, from a stream its schema parsed (or the stored one, on a PATCH that
 * leaves the stream alone): REALITY's key pair is the one given, else the current one, else a
 * new one; its short ids the ones given, else the current ones, else one random id. A public
 * key sent along must belong to that private key (the only stream rule that depends on the
 * profile being edited). Returns errors per field (dot paths under `stream.`), or the stream.
 */
export function resolveStream(
  input: StreamSpec | StoredStream,
  current: CurrentReality,
): { errors: Record<string, string>; resolved?: ResolvedStream } {
  const { reality, ...rest } = input;
  const stream: StoredStream = rest;
  let realityPrivateKey: string | null = null;
  if (input.security === 'reality' && reality !== undefined) {
    const given = 'private_key' in reality ? reality.private_key : undefined;
    const pair = x25519FromPrivate(given ?? current.privateKey ?? '') ?? generateX25519();
    if (reality.public_key !== undefined && reality.public_key !== pair.publicKey)
      return { errors: { 'stream.reality.public_key': 'does not belong to the private key (omit it: it is derived)' } };
    stream.reality = {
      dest: reality.dest,
      server_names: reality.server_names,
      public_key: pair.publicKey,
      short_ids: reality.short_ids ?? current.shortIds ?? [randomBytes(4).toString('hex')],
      fingerprint: reality.fingerprint,
    };
    realityPrivateKey = pair.privateKey;
  }
  const certificateId = input.security === 'tls' ? (input.tls?.certificate_id ?? null) : null;
  return { errors: {}, resolved: { stream, realityPrivateKey, certificateId } };
}

/** `host:port` or a bare port: the site whose handshake REALITY borrows. */
export function isRealityDest(dest: string): boolean {
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
