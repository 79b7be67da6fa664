import { createHash } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Certificate } from '@svc/proto';
import type { CertificateFiles } from '@svc/xray-config';
import { writeFileAtomic } from '../state-files.ts';

/**
 * The contract carries certificates as PEM text and no file paths (spec 2.1 rule 1): the agent
 * writes each one to `certs/<id>-<digest>/` (fullchain.pem, privkey.pem, 0600) and hands the
 * paths to the renderer. The directory name carries a digest of the content, so a new
 * certificate never overwrites the files the running engine was started with: if the new
 * configuration is refused, the old one still finds its files. Directories no configuration
 * uses any more are removed after a successful swap.
 */
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

export class CertificateLayoutError extends Error {
  override name = 'CertificateLayoutError';
}

const dirName = (c: Certificate) =>
  `${c.id}-${createHash('sha256').update(c.certPem).update('\0').update(c.keyPem).digest('hex').slice(0, 16)}`;

export interface CertificateLayout {
  paths: (certificateId: string) => CertificateFiles;
  /** Directory names this configuration uses. */
  dirs: Set<string>;
}

/** Writes the certificates (what is not on disk yet) and returns where each one is. */
export async function layOutCertificates(root: string, certificates: Certificate[]): Promise<CertificateLayout> {
  const byId = new Map<string, string>();
  for (const [i, c] of certificates.entries()) {
    if (!SAFE_ID.test(c.id))
      throw new CertificateLayoutError(`certificates[${i}]: id ${JSON.stringify(c.id.slice(0, 64))} is not a safe file name`);
    if (!c.certPem.includes('-----BEGIN') || !c.keyPem.includes('-----BEGIN'))
      throw new CertificateLayoutError(`certificates[${i}](${c.id}): cert_pem and key_pem must be PEM`);
    const dir = dirName(c);
    const existing = await readdir(join(root, dir)).catch(() => [] as string[]);
    if (!existing.includes('fullchain.pem') || !existing.includes('privkey.pem')) {
      await writeFileAtomic(join(root, dir, 'fullchain.pem'), c.certPem);
      await writeFileAtomic(join(root, dir, 'privkey.pem'), c.keyPem);
    }
    byId.set(c.id, dir);
  }
  return {
    dirs: new Set(byId.values()),
    paths: (id) => {
      const dir = byId.get(id);
      if (!dir) throw new CertificateLayoutError(`certificate ${JSON.stringify(id)} is not in NodeConfig.certificates`);
      return { certFile: join(root, dir, 'fullchain.pem'), keyFile: join(root, dir, 'privkey.pem') };
    },
  };
}

/** Removes certificate directories none of `keep` names. */
export async function pruneCertificates(root: string, keep: Set<string>): Promise<void> {
  for (const name of await readdir(root).catch(() => [] as string[]))
    if (!keep.has(name) && !name.startsWith('.')) await rm(join(root, name), { recursive: true, force: true });
}
