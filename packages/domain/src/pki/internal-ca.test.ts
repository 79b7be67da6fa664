import { execFileSync } from 'node:child_process';
import { webcrypto, X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueServerCertificate, type LoadedCa, loadCa, signNodeCsr, verifyNodeCertificate } from './internal-ca.ts';
import { x509 } from './x509.ts';

const now = new Date('2026-11-21T10:00:00Z');
let ca: LoadedCa;
beforeAll(async () => {
  ca = await loadCa(await createCa('inst-test', now));
});

/** What an agent does: a key pair that never leaves the node, and a CSR for it. */
async function agentCsr(alg: 'p256' | 'ed25519' | 'rsa' = 'p256', subject = 'CN=whatever-the-agent-asks') {
  const params =
    alg === 'p256'
      ? ({ gen: { name: 'ECDSA', namedCurve: 'P-256' }, sig: { name: 'ECDSA', hash: 'SHA-256' } } as const)
      : alg === 'ed25519'
        ? ({ gen: { name: 'Ed25519' }, sig: { name: 'Ed25519' } } as const)
        : ({
            gen: { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
            sig: { name: 'RSASSA-PKCS1-v1_5' },
          } as const);
  const keys = (await webcrypto.subtle.generateKey(params.gen as never, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: params.sig as never });
  return csr.toString('pem');
}

describe('the internal CA issues node identities (spec 5.1, 4.1 rule 1)', () => {
  it('signs a CSR into a client certificate whose CN is the node id, whatever subject the CSR asked for', async () => {
    const pem = await signNodeCsr(ca, await agentCsr(), 'nod_01abc', now);
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe('CN=nod_01abc');
    expect(cert.checkIssued(ca.nodeCert)).toBe(true);
    expect(cert.verify(ca.nodeCert.publicKey)).toBe(true);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(verifyNodeCertificate(ca, cert.raw, now)).toEqual({
      node_id: 'nod_01abc',
      serial: cert.serialNumber.toUpperCase(),
      not_after: new Date(cert.validTo),
    });
  });

  it('accepts Ed25519 agent keys and refuses RSA', async () => {
    expect(
      verifyNodeCertificate(ca, new X509Certificate(await signNodeCsr(ca, await agentCsr('ed25519'), 'nod_ed', now)).raw, now)?.node_id,
    ).toBe('nod_ed');
    await expect(signNodeCsr(ca, await agentCsr('rsa'), 'nod_rsa', now)).rejects.toMatchObject({
      type: 'validation',
      errors: { csr_pem: expect.stringMatching(/P-256 or Ed25519/) },
    });
  });

  it('refuses a CSR that is not one or whose signature does not verify', async () => {
    await expect(signNodeCsr(ca, 'hello', 'nod_x', now)).rejects.toMatchObject({ type: 'validation' });
    await expect(signNodeCsr(ca, ca.certPem, 'nod_x', now)).rejects.toMatchObject({ type: 'validation' });
    const good = await agentCsr();
    const der = Buffer.from(x509.PemConverter.decodeFirst(good));
    der[der.length - 5] = (der[der.length - 5] as number) ^ 0x01; // one bit of the signature
    const tampered = x509.PemConverter.encode(der, 'CERTIFICATE REQUEST');
    await expect(signNodeCsr(ca, tampered, 'nod_x', now)).rejects.toMatchObject({ type: 'validation' });
  });

  it('a certificate from another installation, even of the same shape, names no node', async () => {
    const other = await loadCa(await createCa('inst-other', now));
    const foreign = new X509Certificate(await signNodeCsr(other, await agentCsr(), 'nod_01abc', now));
    expect(verifyNodeCertificate(ca, foreign.raw, now)).toBeNull();
  });

  it('an expired or not yet valid certificate names no node; a server certificate is not a node identity', async () => {
    const pem = await signNodeCsr(ca, await agentCsr(), 'nod_t', now, 1);
    expect(verifyNodeCertificate(ca, pem, new Date(now.getTime() + 2 * 86_400_000))).toBeNull();
    expect(verifyNodeCertificate(ca, pem, new Date(now.getTime() - 3600_000))).toBeNull();
    const server = await issueServerCertificate(ca, ['localhost', '127.0.0.1'], now);
    expect(verifyNodeCertificate(ca, server.certPem, now)).toBeNull();
  });

  it('issues a server certificate for the listed names and addresses', async () => {
    const server = await issueServerCertificate(ca, ['localhost', '127.0.0.1', '::1'], now);
    const cert = new X509Certificate(server.certPem);
    expect(cert.checkHost('localhost')).toBe('localhost');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkIssued(ca.nodeCert) && cert.verify(ca.nodeCert.publicKey)).toBe(true);
  });

  it('OpenSSL agrees: the client certificate verifies for sslclient against the CA', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pki-'));
    writeFileSync(join(dir, 'ca.pem'), ca.certPem);
    writeFileSync(join(dir, 'node.pem'), await signNodeCsr(ca, await agentCsr(), 'nod_ossl', new Date()));
    const out = execFileSync('openssl', [
      'verify',
      '-CAfile',
      join(dir, 'ca.pem'),
      '-purpose',
      'sslclient',
      join(dir, 'node.pem'),
    ]).toString();
    expect(out).toContain(': OK');
  });
});
