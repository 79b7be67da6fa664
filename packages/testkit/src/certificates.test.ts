import { createPrivateKey, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { selfSignedCertificate } from './certificates.ts';

describe('selfSignedCertificate', () => {
  it('is an EC P-256 certificate for the common name alone by default, valid for 30 days, with its key', () => {
    const { cert_pem, key_pem } = selfSignedCertificate();
    const cert = new X509Certificate(cert_pem);
    const key = createPrivateKey(key_pem);
    expect(cert.subject).toBe('CN=example.com');
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.subjectAltName).toBe('DNS:example.com');
    expect(key.asymmetricKeyType).toBe('ec');
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(cert.checkPrivateKey(key)).toBe(true);
    const days = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86_400_000;
    expect(days).toBe(30);
  });

  it('takes the names and the validity asked for; no subjectAltName when no names', () => {
    const named = new X509Certificate(
      selfSignedCertificate({ cn: 'edge.example.com', dnsNames: ['edge.example.com', 'www.example.com'], days: 2 }).cert_pem,
    );
    expect(named.subject).toBe('CN=edge.example.com');
    expect(named.subjectAltName).toBe('DNS:edge.example.com, DNS:www.example.com');
    expect((Date.parse(named.validTo) - Date.parse(named.validFrom)) / 86_400_000).toBe(2);
    expect(new X509Certificate(selfSignedCertificate({ dnsNames: [] }).cert_pem).subjectAltName).toBeUndefined();
  });
});
