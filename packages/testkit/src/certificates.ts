import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * A leaf for `cn` signed by a CA of its own (openssl): `cert_pem` is the chain (leaf, then the CA),
 * `key_pem` the leaf's key; `leaf`, `ca` and `ca_key_pem` apart, for broken chains and wrong keys.
 */
export function caSignedCertificate(
  cn: string,
  days = 90,
  /** IP addresses the leaf names besides `cn` (a server reached by address). */
  ipAddresses: readonly string[] = [],
): { cert_pem: string; key_pem: string; leaf: string; ca: string; ca_key_pem: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-chain-'));
  try {
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
    ssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      String(days + 1),
      '-subj',
      '/CN=Test CA',
    );
    ssl(
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'leaf.key',
      '-out',
      'leaf.csr',
      '-subj',
      `/CN=${cn}`,
    );
    writeFileSync(join(dir, 'ext.cnf'), `subjectAltName=${[`DNS:${cn}`, ...ipAddresses.map((ip) => `IP:${ip}`)].join(',')}\n`);
    ssl(
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      String(days),
      '-extfile',
      'ext.cnf',
      '-out',
      'leaf.pem',
    );
    const [leaf, ca, key, caKey] = ['leaf.pem', 'ca.pem', 'leaf.key', 'ca.key'].map((f) => readFileSync(join(dir, f), 'utf8')) as [
      string,
      string,
      string,
      string,
    ];
    return { cert_pem: `${leaf}${ca}`, key_pem: key, leaf, ca, ca_key_pem: caKey };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
