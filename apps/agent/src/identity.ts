import 'reflect-metadata';
import { createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { readOptional, writeFileAtomic } from './state-files.ts';

/**
 * The node's identity: its id, the gateway it talks to, the internal CA that pins the gateway,
 * and its mTLS certificate with the private key that signed the CSR. The key is made here
 * (ECDSA P-256, what the gateway accepts besides Ed25519) and never leaves the node; it is
 * kept with the certificate in one 0600 file, so a renewal replaces both in one rename.
 */
export interface Identity {
  nodeId: string;
  /** host:port of the gateway. */
  server: string;
  caCertPem: string;
  certPem: string;
  keyPem: string;
}

const FILE = 'identity.json';
const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIG = { name: 'ECDSA', hash: 'SHA-256' } as const;

export const identityFile = (stateDir: string) => join(stateDir, FILE);

/** A new key and a CSR for it; the CN is a placeholder (the gateway names the node). */
export async function newKeyAndCsr(cn = 'svc-agent'): Promise<{ csrPem: string; keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: `CN=${cn}`, keys, signingAlgorithm: SIG });
  const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { csrPem: csr.toString('pem'), keyPem };
}

export async function loadIdentity(stateDir: string): Promise<Identity | null> {
  const text = await readOptional(identityFile(stateDir));
  if (text === null) return null;
  const id = JSON.parse(text) as Identity;
  for (const k of ['nodeId', 'server', 'caCertPem', 'certPem', 'keyPem'] as const)
    if (typeof id[k] !== 'string' || id[k] === '') throw new Error(`${identityFile(stateDir)}: ${k} missing; enroll again`);
  return id;
}

export async function saveIdentity(stateDir: string, id: Identity): Promise<void> {
  await writeFileAtomic(identityFile(stateDir), `${JSON.stringify(id, null, 2)}\n`);
}

/**
 * Why `certPem` cannot serve as this node's identity, or null: it must be signed by the CA,
 * name the node (CN) when nodeId is given, and belong to the key.
 */
export function certificateProblem(certPem: string, keyPem: string, caCertPem: string, nodeId?: string): string | null {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return 'the certificate does not parse';
  }
  if (!cert.verify(new X509Certificate(caCertPem).publicKey)) return 'the certificate is not signed by the pinned CA';
  if (!cert.checkPrivateKey(createPrivateKey(keyPem))) return 'the certificate is not for this node’s key';
  if (nodeId !== undefined && !cert.subject.split('\n').includes(`CN=${nodeId}`)) return `the certificate does not name node ${nodeId}`;
  return null;
}

/** When the certificate expires and when the agent renews it: at two thirds of its lifetime. */
export function renewalSchedule(certPem: string): { notAfter: Date; renewAt: Date } {
  const cert = new X509Certificate(certPem);
  const from = new Date(cert.validFrom).getTime();
  const to = new Date(cert.validTo).getTime();
  return { notAfter: new Date(to), renewAt: new Date(from + ((to - from) * 2) / 3) };
}
