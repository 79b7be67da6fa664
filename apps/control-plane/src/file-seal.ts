import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** IV and tag, before the ciphertext. */
export const SEAL_OVERHEAD = 12 + 16;

/**
 * AES-256-GCM for what the gateway keeps on disk (gzip pieces, last pushes): a DesiredState
 * carries what the database keeps sealed (inbound TLS keys, REALITY keys) and every user's
 * credentials, so a copy of the data dir without the installation key must not read them. The
 * key is derived from the installation key (Sealer.derive), the same on every replica and after
 * restarts; `context` is authenticated with the bytes (a file's name and head), so a file moved
 * to another name or given another head does not open. A random 96-bit IV per file.
 */
export interface FileSeal {
  /** IV, tag, then the ciphertext of `plain` (as parts, to write without a copy). */
  seal(context: string | Uint8Array, plain: Uint8Array | readonly Uint8Array[]): Buffer[];
  /** The plaintext of `sealed` (IV, tag, ciphertext), or undefined when it does not authenticate. */
  open(context: string | Uint8Array, sealed: Uint8Array): Buffer | undefined;
}

export function fileSeal(key: Buffer): FileSeal {
  if (key.length !== 32) throw new Error('file seal key must be 32 bytes');
  return {
    seal(context, plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(typeof context === 'string' ? Buffer.from(context) : context);
      const body = (plain instanceof Uint8Array ? [plain] : plain).map((p) => cipher.update(p));
      body.push(cipher.final());
      return [iv, cipher.getAuthTag(), ...body];
    },
    open(context, sealed) {
      if (sealed.length < SEAL_OVERHEAD) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
        decipher.setAAD(typeof context === 'string' ? Buffer.from(context) : context);
        decipher.setAuthTag(sealed.subarray(12, SEAL_OVERHEAD));
        return Buffer.concat([decipher.update(sealed.subarray(SEAL_OVERHEAD)), decipher.final()]);
      } catch {
        return undefined;
      }
    },
  };
}
