import { webcrypto, X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkNodeCertificate, createCa, type LoadedCa, loadCa, signNodeCsr } from './internal-ca.ts';
import { checkPeerCertificate, type PeerCertificate } from './peer-certificate.ts';
import { verifiedCertificates } from './verified-certificates.ts';
import { x509 } from './x509.ts';

// Issue 17.3: the gateway checks the client certificate on the TLS layer's own parse
// (tls.PeerCertificate: toLegacyObject is the same shape getPeerCertificate returns), with the
// same outcome as the full check (checkNodeCertificate), and remembers the ones it verified.

const now = new Date('2026-11-21T10:00:00Z');
const DAY = 86_400_000;
let ca: LoadedCa;
let other: LoadedCa;
let pem: string;
beforeAll(async () => {
  ca = await loadCa(await createCa('inst-test', now));
  // Another installation's CA, under the very same name as ours.
  other = await loadCa(await createCa('inst-test', now));
  pem = await signNodeCsr(ca, await csr(), 'nod_01abc', now);
});

async function csr(): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const req = await x509.Pkcs10CertificateRequestGenerator.create({
    name: 'CN=x',
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  return req.toString('pem');
}

const peerOf = (p: string): PeerCertificate => new X509Certificate(p).toLegacyObject();

describe('the client certificate checked on the TLS layer’s parse (checkPeerCertificate)', () => {
  it('names the same node, serial and validity as the full check', () => {
    const full = checkNodeCertificate(ca, new X509Certificate(pem).raw, now);
    expect(full).not.toBeNull();
    expect(checkPeerCertificate(ca, peerOf(pem), now)).toEqual(full);
  });

  it('refuses a certificate signed by another key under our CA’s name', async () => {
    expect(other.nodeCert.subject).toBe(ca.nodeCert.subject);
    const forged = await signNodeCsr(other, await csr(), 'nod_01abc', now);
    expect(checkPeerCertificate(ca, peerOf(forged), now)).toBeNull();
    expect(checkNodeCertificate(ca, new X509Certificate(forged).raw, now)).toBeNull();
  });

  it('refuses a certificate whose signed part was altered (one byte of the DER)', () => {
    const peer = peerOf(pem);
    const raw = Buffer.from(peer.raw);
    raw[raw.length - 120] = (raw[raw.length - 120] as number) ^ 1;
    expect(checkPeerCertificate(ca, { ...peer, raw }, now)).toBeNull();
  });

  it('refuses fields that do not belong to the signed DER: the signature covers raw, and a mismatch of names is refused', () => {
    const peer = peerOf(pem);
    expect(checkPeerCertificate(ca, { ...peer, issuer: { CN: 'somebody else' } }, now)).toBeNull();
    expect(checkPeerCertificate(ca, { ...peer, ext_key_usage: [] }, now)).toBeNull();
  });

  it('refuses before its validity and after it', () => {
    const c = new X509Certificate(pem);
    expect(checkPeerCertificate(ca, peerOf(pem), new Date(Date.parse(c.validFrom) - 1000))).toBeNull();
    expect(checkPeerCertificate(ca, peerOf(pem), new Date(Date.parse(c.validTo) + 1000))).toBeNull();
  });

  it('refuses what is not a certificate at all (garbage DER goes the full way and is refused)', () => {
    expect(checkPeerCertificate(ca, { raw: Buffer.from('30820001ff', 'hex') }, now)).toBeNull();
    expect(checkPeerCertificate(ca, { raw: Buffer.alloc(0) }, now)).toBeNull();
  });
});

describe('verified certificates are remembered, never in place of a refusal (verifiedCertificates)', () => {
  it('a remembered certificate is refused past its validity, and a stranger’s is never remembered', async () => {
    const verify = verifiedCertificates(ca);
    expect(verify(peerOf(pem), now)?.node_id).toBe('nod_01abc');
    expect(verify(peerOf(pem), now)?.node_id).toBe('nod_01abc');
    expect(verify(peerOf(pem), new Date(now.getTime() + 365 * DAY))).toBeNull();
    const forged = await signNodeCsr(other, await csr(), 'nod_01abc', now);
    expect(verify(peerOf(forged), now)).toBeNull();
    expect(verify(peerOf(forged), now)).toBeNull();
  });
});
