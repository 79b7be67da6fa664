import { decryptSecret, encryptSecret } from './secrets.ts';

/** Secrets at rest: sealed with the installation key (AES-256-GCM); opened only where used. */
export interface Sealer {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export const createSealer = (installationKey: Buffer): Sealer => ({
  seal: (p) => encryptSecret(installationKey, p),
  open: (s) => decryptSecret(installationKey, s),
});
