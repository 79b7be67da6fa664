import { createHmac, hkdfSync } from 'node:crypto';
import { decryptSecret, encryptSecret } from './secrets.ts';

/** Secrets at rest: sealed with the installation key (AES-256-GCM); opened only where used. */
export interface Sealer {
  seal(plaintext: string): string;
  open(sealed: string): string;
  /**
   * A 128-bit tag of `data` (base64url) under a key derived from the installation key for
   * `purpose` alone, so a tag made for one purpose never verifies for another: values handed
   * out and taken back (page cursors) show whether we made them.
   */
  mac(purpose: string, data: string): string;
  /**
   * `bytes` of key material derived from the installation key for `purpose` alone (HKDF-SHA256):
   * the same on every replica and after every restart, and useless for any other purpose.
   */
  derive(purpose: string, bytes: number): Buffer;
}

export function createSealer(installationKey: Buffer): Sealer {
  const macKeys = new Map<string, Buffer>();
  const macKey = (purpose: string): Buffer => {
    let key = macKeys.get(purpose);
    if (!key) {
      key = createHmac('sha256', installationKey).update(`svc mac key: ${purpose}`).digest();
      macKeys.set(purpose, key);
    }
    return key;
  };
  return {
    seal: (p) => encryptSecret(installationKey, p),
    open: (s) => decryptSecret(installationKey, s),
    mac: (purpose, data) => createHmac('sha256', macKey(purpose)).update(data).digest().subarray(0, 16).toString('base64url'),
    derive: (purpose, bytes) => Buffer.from(hkdfSync('sha256', installationKey, Buffer.alloc(0), `svc derived key: ${purpose}`, bytes)),
  };
}
