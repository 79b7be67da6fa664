import { webcrypto, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { ValidationError } from '../errors.ts';
import { x509 } from './x509.ts';

type Key = webcrypto.CryptoKey;
const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIG = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY = 86_400_000;
/** Issued certificates start a little in the past: clocks of nodes are not ours. */
const BACKDATE_MS = 5 * 60_000;

export interface CaMaterial {
  certPem: string;
  /** PKCS#8 PEM: sealed with the installation key before it is stored. */
  keyPem: string;
}

export interface LoadedCa {
  certPem: string;
  cert: x509.X509Certificate;
  key: Key;
  /** node:crypto view, for chain checks on the hot path. */
  nodeCert: X509Certificate;
}

const serial = (): string => {
  const b = webcrypto.getRandomValues(new Uint8Array(16));
  b[0] = (b[0] as number) & 0x7f;
  return Buffer.from(b).toString('hex');
};
const pkcs8Pem = async (k: Key) => x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', k), 'PRIVATE KEY');

/**
 * The installation's own certificate authority for agent identities (spec 5.1), ECDSA P-256.
 * Its name carries the installation id: a certificate from another installation's CA must not
 * share our issuer name (Node's TLS layer drops such a connection instead of letting us refuse
 * it with UNAUTHENTICATED).
 */
export async function createCa(installationId: string, now: Date, years = 10): Promise<CaMaterial> {
  const keys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=svc internal CA ${installationId}`,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + years * 365 * DAY),
    signingAlgorithm: SIG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await pkcs8Pem(keys.privateKey) };
}

export async function loadCa(m: CaMaterial): Promise<LoadedCa> {
  return {
    certPem: m.certPem,
    cert: new x509.X509Certificate(m.certPem),
    key: await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(m.keyPem), EC, false, ['sign']),
    nodeCert: new X509Certificate(m.certPem),
  };
}

const badCsr = (reason: string) => new ValidationError('invalid certificate signing request', { csr_pem: reason });

/**
 * Signs an agent's CSR: the subject the agent asked for is ignored, the certificate names the
 * node (CN = node id, spec 4.1 rule 1) and is good for TLS client authentication only. The
 * private key never left the node; only its public half is in the CSR, whose signature proves
 * the agent holds it.
 */
export async function signNodeCsr(ca: LoadedCa, csrPem: string, nodeId: string, now: Date, days = 90): Promise<string> {
  let req: x509.Pkcs10CertificateRequest;
  try {
    req = new x509.Pkcs10CertificateRequest(csrPem);
  } catch {
    throw badCsr('not a PEM-encoded PKCS#10 certificate signing request');
  }
  if (!(await req.verify())) throw badCsr('the signature of the request does not verify');
  const alg = req.publicKey.algorithm as { name: string; namedCurve?: string };
  if (!(alg.name === 'ECDSA' && alg.namedCurve === 'P-256') && alg.name !== 'Ed25519') {
    throw badCsr('the key must be ECDSA P-256 or Ed25519');
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${nodeId}`,
    issuer: ca.cert.subject,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + days * DAY),
    signingAlgorithm: SIG,
    publicKey: req.publicKey,
    signingKey: ca.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert, false),
      await x509.SubjectKeyIdentifierExtension.create(await req.publicKey.export()),
    ],
  });
  return cert.toString('pem');
}

/** A server certificate for the gRPC listener, for these host names and addresses. */
export async function issueServerCertificate(ca: LoadedCa, hosts: readonly string[], now: Date, days = 90): Promise<CaMaterial> {
  const keys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${hosts[0] ?? 'svc'}`,
    issuer: ca.cert.subject,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + days * DAY),
    signingAlgorithm: SIG,
    publicKey: keys.publicKey,
    signingKey: ca.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIP(h) ? ('ip' as const) : ('dns' as const), value: h }))),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert, false),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await pkcs8Pem(keys.privateKey) };
}

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

/** Who a verified client certificate names: the node id (its CN), its serial (upper-case hex) and expiry. */
export interface NodeIdentity {
  node_id: string;
  serial: string;
  not_after: Date;
}

/**
 * The node a presented client certificate names, or null: it must be issued and signed by our
 * CA (the TLS layer asks for a certificate but does not check it), be valid at `now`, and be
 * meant for client authentication.
 */
export function verifyNodeCertificate(ca: LoadedCa, der: Buffer | string, now: Date): NodeIdentity | null {
  return checkNodeCertificate(ca, der, now)?.identity ?? null;
}

/** verifyNodeCertificate with the certificate's validity period (ms), for verifiedCertificates. */
export function checkNodeCertificate(
  ca: LoadedCa,
  der: Buffer | string,
  now: Date,
): { identity: NodeIdentity; notBefore: number; notAfter: number } | null {
  let c: X509Certificate;
  try {
    c = new X509Certificate(der);
  } catch {
    return null;
  }
  if (!c.checkIssued(ca.nodeCert) || !c.verify(ca.nodeCert.publicKey)) return null;
  const t = now.getTime();
  const notBefore = Date.parse(c.validFrom);
  const notAfter = Date.parse(c.validTo);
  if (t < notBefore || t > notAfter) return null;
  if (!(c.keyUsage ?? []).includes(CLIENT_AUTH)) return null;
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(c.subject)?.[1];
  return cn
    ? { identity: { node_id: cn, serial: c.serialNumber.toUpperCase(), not_after: new Date(c.validTo) }, notBefore, notAfter }
    : null;
}
