import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { ValidationError } from '../errors.ts';
import { isDomainName } from '../inbound-profiles/stream.ts';
import { asciiLowerCase } from '../shared/ascii-case.ts';

export interface ParsedCertificate {
  /** The chain as given, normalised to PEM blocks joined by newlines. */
  certPem: string;
  keyPem: string;
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  domains: string[];
}

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const MAX_CHAIN = 10;

/**
 * Parses a PEM chain (the first certificate is the leaf), checks the private key belongs to
 * the leaf and that the chain builds (each certificate issued and signed by the next), and
 * takes the validity and names from the leaf. `domains`, when given, must be names the
 * certificate covers; otherwise they are its DNS subjectAltNames. With `now`, an expired leaf
 * is refused (new material must not take TLS inbounds down).
 */
export function parseCertificateMaterial(
  certPem: string,
  keyPem: string,
  domains?: readonly string[],
  opts: { now?: Date } = {},
): ParsedCertificate {
  const blocks = certPem.match(CERT_BLOCK) ?? [];
  if (blocks.length === 0)
    throw new ValidationError('invalid certificate', { cert_pem: 'no PEM certificate (-----BEGIN CERTIFICATE-----) found' });
  if (blocks.length > MAX_CHAIN)
    throw new ValidationError('invalid certificate', { cert_pem: `at most ${MAX_CHAIN} certificates in the chain` });
  const certs: X509Certificate[] = [];
  for (const [i, block] of blocks.entries()) {
    try {
      certs.push(new X509Certificate(block));
    } catch {
      throw new ValidationError('invalid certificate', { cert_pem: `certificate ${i + 1} of the chain does not parse` });
    }
  }
  const leaf = certs[0] as X509Certificate;
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    throw new ValidationError('invalid key', { key_pem: 'not an unencrypted PEM private key' });
  }
  if (!leaf.checkPrivateKey(key)) throw new ValidationError('key mismatch', { key_pem: 'does not match the certificate' });
  for (let i = 0; i + 1 < certs.length; i++) {
    const [child, parent] = [certs[i] as X509Certificate, certs[i + 1] as X509Certificate];
    if (!child.checkIssued(parent) || !child.verify(parent.publicKey))
      throw new ValidationError('broken chain', { cert_pem: `certificate ${i + 1} of the chain is not issued by certificate ${i + 2}` });
  }
  if (opts.now && new Date(leaf.validTo).getTime() <= opts.now.getTime())
    throw new ValidationError('expired certificate', { cert_pem: `the certificate expired at ${new Date(leaf.validTo).toISOString()}` });

  const sanDns = dnsNames(leaf.subjectAltName);
  let names: string[];
  if (domains !== undefined && domains.length > 0) {
    names = [...new Set(domains.map((d) => asciiLowerCase(d.trim())))];
    const errors: Record<string, string> = {};
    names.forEach((d, i) => {
      if (!isDomainName(d)) errors[`domains.${i}`] = 'must be a host name (a leading *. allowed)';
      else if (!covers(leaf, sanDns, d)) errors[`domains.${i}`] = `the certificate does not cover ${d}`;
    });
    if (Object.keys(errors).length > 0) throw new ValidationError('invalid domains', errors);
  } else {
    names = sanDns.length > 0 ? sanDns : commonName(leaf.subject);
    if (names.length === 0) throw new ValidationError('no names', { domains: 'the certificate names no DNS names; give domains' });
  }
  return {
    certPem: `${blocks.join('\n')}\n`,
    keyPem: key.export({ format: 'pem', type: 'pkcs8' }) as string,
    issuer: leaf.issuer.split('\n').join(', '),
    notBefore: new Date(leaf.validFrom),
    notAfter: new Date(leaf.validTo),
    domains: names,
  };
}

/** DNS entries of a subjectAltName string (`DNS:a.example, IP Address:1.2.3.4, ...`), lower case. */
function dnsNames(san: string | undefined): string[] {
  if (!san) return [];
  const out: string[] = [];
  for (const part of san.split(/,\s*/)) {
    const m = /^DNS:(.+)$/.exec(part.trim());
    if (m?.[1]) out.push(asciiLowerCase(m[1]));
  }
  return [...new Set(out)];
}

function commonName(subject: string): string[] {
  const cn = subject
    .split('\n')
    .map((l) => /^CN=(.+)$/.exec(l)?.[1])
    .find(Boolean);
  return cn && isDomainName(cn) ? [asciiLowerCase(cn)] : [];
}

function covers(leaf: X509Certificate, sanDns: string[], domain: string): boolean {
  if (sanDns.includes(domain)) return true;
  if (domain.startsWith('*.')) return false;
  return leaf.checkHost(domain) !== undefined;
}
