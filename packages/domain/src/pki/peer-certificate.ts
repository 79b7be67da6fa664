import { type KeyObject, verify } from 'node:crypto';
import { checkNodeCertificate, type LoadedCa, type NodeIdentity } from './internal-ca.ts';

/**
 * The client certificate as Node's TLS layer gives it (tls.PeerCertificate, what grpc-js's
 * getAuthContext returns): OpenSSL has already parsed it, `raw` is its DER.
 */
export interface PeerCertificate {
  raw: Buffer;
  subject?: { CN?: string | string[] };
  issuer?: { CN?: string | string[] };
  serialNumber?: string;
  valid_from?: string;
  valid_to?: string;
  ext_key_usage?: string[];
}

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
/** AlgorithmIdentifier ecdsa-with-SHA256 (1.2.840.10045.4.3.2), DER: what our CA signs with. */
const ECDSA_SHA256 = Buffer.from('300a06082a8648ce3d040302', 'hex');

interface CaFacts {
  key: KeyObject;
  cn: string | null;
  ec: boolean;
}
const facts = new WeakMap<LoadedCa, CaFacts>();
const factsOf = (ca: LoadedCa): CaFacts => {
  let f = facts.get(ca);
  if (!f) {
    const key = ca.nodeCert.publicKey;
    f = { key, cn: /(?:^|\n)CN=([^\n]+)/.exec(ca.nodeCert.subject)?.[1] ?? null, ec: key.asymmetricKeyType === 'ec' };
    facts.set(ca, f);
  }
  return f;
};

/** One DER element at `off` of `buf`: [start, start of contents, end); null when it does not fit. */
function element(buf: Buffer, off: number, tag: number): { start: number; body: number; end: number } | null {
  if (off + 2 > buf.length || buf[off] !== tag) return null;
  let len = buf[off + 1] as number;
  let body = off + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n < 1 || n > 3 || body + n > buf.length) return null;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + (buf[body + i] as number);
    body += n;
  }
  const end = body + len;
  return end <= buf.length ? { start: off, body, end } : null;
}

/**
 * The certificate's signed part, algorithm and signature (Certificate ::= SEQUENCE {
 * tbsCertificate, signatureAlgorithm, signatureValue BIT STRING }); null when `der` is not
 * exactly that.
 */
function signedParts(der: Buffer): { tbs: Buffer; algorithm: Buffer; signature: Buffer } | null {
  const outer = element(der, 0, 0x30);
  if (!outer || outer.end !== der.length) return null;
  const tbs = element(der, outer.body, 0x30);
  const alg = tbs && element(der, tbs.end, 0x30);
  const sig = alg && element(der, alg.end, 0x03);
  if (!tbs || !alg || !sig || sig.end !== outer.end || der[sig.body] !== 0) return null;
  return {
    tbs: der.subarray(tbs.start, tbs.end),
    algorithm: der.subarray(alg.start, alg.end),
    signature: der.subarray(sig.body + 1, sig.end),
  };
}

/**
 * verifyNodeCertificate for the certificate the TLS layer already parsed (issue 17.3: building
 * an X509Certificate from it again was ~0.1 ms unloaded, ~0.3 ms in a storm, the largest
 * single item of a reconnect's CPU). The same checks: signed by our CA's key (the signature
 * over the DER's signed part, checked by OpenSSL's ECDSA), issued by its name, within its
 * validity at `now`, meant for client authentication, naming one node; the names, serial and
 * dates read from Node's parse of the same DER. Anything unexpected (another signature
 * algorithm, a shape the slicing does not take) goes the full way (checkNodeCertificate).
 */
export function checkPeerCertificate(
  ca: LoadedCa,
  peer: PeerCertificate,
  now: Date,
): { identity: NodeIdentity; notBefore: number; notAfter: number } | null {
  const f = factsOf(ca);
  const parts = f.ec ? signedParts(peer.raw) : null;
  if (!parts || !parts.algorithm.equals(ECDSA_SHA256)) return checkNodeCertificate(ca, peer.raw, now);
  let signed: boolean;
  try {
    signed = verify('sha256', parts.tbs, { key: f.key, dsaEncoding: 'der' }, parts.signature);
  } catch {
    return null;
  }
  if (!signed) return null;
  const cn = peer.subject?.CN;
  if (typeof cn !== 'string' || cn === '' || peer.issuer?.CN !== f.cn || typeof peer.serialNumber !== 'string') return null;
  const notBefore = Date.parse(peer.valid_from ?? '');
  const notAfter = Date.parse(peer.valid_to ?? '');
  const t = now.getTime();
  if (!Number.isFinite(notBefore) || !Number.isFinite(notAfter) || t < notBefore || t > notAfter) return null;
  if (!(peer.ext_key_usage ?? []).includes(CLIENT_AUTH)) return null;
  return { identity: { node_id: cn, serial: peer.serialNumber.toUpperCase(), not_after: new Date(notAfter) }, notBefore, notAfter };
}
