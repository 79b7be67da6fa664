import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SelfSignedCertificateOptions {
  /** Subject common name; default example.com. */
  cn?: string;
  /** subjectAltName DNS entries; default the common name alone, [] for none. */
  dnsNames?: string[];
  /** Validity from now; default 30. */
  days?: number;
}

/**
 * A self-signed EC P-256 certificate and its unencrypted PKCS#8 key, made by openssl as an
 * operator would make one to upload (an implementation independent of ours). Named as the
 * certificates API names them, so it spreads into an upload body.
 */
export function selfSignedCertificate(opts: SelfSignedCertificateOptions = {}): { cert_pem: string; key_pem: string } {
  const cn = opts.cn ?? 'example.com';
  const dnsNames = opts.dnsNames ?? [cn];
  const dir = mkdtempSync(join(tmpdir(), 'svc-testkit-cert-'));
  try {
    const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        String(opts.days ?? 30),
        '-subj',
        `/CN=${cn}`,
        ...(dnsNames.length ? ['-addext', `subjectAltName=${dnsNames.map((d) => `DNS:${d}`).join(',')}`] : []),
        '-keyout',
        key,
        '-out',
        cert,
      ],
      // stderr kept: a failure names what openssl refused.
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 },
    );
    return { cert_pem: readFileSync(cert, 'utf8'), key_pem: readFileSync(key, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
