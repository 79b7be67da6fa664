import { createCipheriv, createDecipheriv, randomBytes, type ScryptOptions, scrypt as scryptCb } from 'node:crypto';
import { BackupError } from './errors.ts';

/**
 * The installation key inside an archive, sealed with a passphrase the operator chooses:
 * scrypt (N=2^17, r=8, p=1: ~128 MiB and a few hundred ms per try, OWASP's recommendation)
 * derives a 256-bit key, AES-256-GCM seals the installation key under it. The archive's id is
 * the additional data: an envelope moved into another archive does not open.
 */
export interface KeyEnvelope {
  kdf: 'scrypt';
  n: number;
  r: number;
  p: number;
  salt: string;
  cipher: 'aes-256-gcm';
  iv: string;
  tag: string;
  ciphertext: string;
}

export class WrongPassphraseError extends BackupError {
  constructor() {
    super(
      'the passphrase does not open the installation key in this archive (wrong passphrase, or the archive was altered); nothing was changed',
    );
  }
}

/** The shortest passphrase accepted for sealing a key (it is all that stands between an archive and its secrets). */
export const MIN_PASSPHRASE_LENGTH = 12;

export function checkPassphrase(passphrase: string): void {
  if ([...passphrase].length < MIN_PASSPHRASE_LENGTH)
    throw new BackupError(
      `the passphrase must be at least ${MIN_PASSPHRASE_LENGTH} characters long: it alone protects the installation key in the archive`,
    );
}

const PARAMS = { n: 2 ** 17, r: 8, p: 1 };
/** The most an archive may ask scrypt for (a hostile archive could ask for any amount). */
const MAX_N = 2 ** 20;

function derive(passphrase: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  const opts: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r + (1 << 20) };
  return new Promise((resolve, reject) =>
    scryptCb(passphrase.normalize('NFC'), salt, 32, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function sealKey(key: Buffer, passphrase: string, archiveId: string): Promise<KeyEnvelope> {
  checkPassphrase(passphrase);
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const kek = await derive(passphrase, salt, PARAMS.n, PARAMS.r, PARAMS.p);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from(archiveId));
  const ciphertext = Buffer.concat([cipher.update(key), cipher.final()]);
  return {
    kdf: 'scrypt',
    ...PARAMS,
    salt: salt.toString('base64'),
    cipher: 'aes-256-gcm',
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ciphertext: ciphertext.toString('base64'),
  };
}

/** Checks an envelope's shape (it comes from a file anyone may have edited). */
export function parseKeyEnvelope(value: unknown): KeyEnvelope {
  const e = value as Partial<KeyEnvelope> | null;
  const b64 = (s: unknown, bytes?: number) =>
    typeof s === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(s) && (bytes === undefined || Buffer.from(s, 'base64').length === bytes);
  const int = (x: unknown, max: number) => Number.isInteger(x) && (x as number) >= 1 && (x as number) <= max;
  if (
    !e ||
    typeof e !== 'object' ||
    e.kdf !== 'scrypt' ||
    e.cipher !== 'aes-256-gcm' ||
    !int(e.n, MAX_N) ||
    ((e.n as number) & ((e.n as number) - 1)) !== 0 ||
    !int(e.r, 32) ||
    !int(e.p, 16) ||
    !b64(e.salt) ||
    !b64(e.iv, 12) ||
    !b64(e.tag, 16) ||
    !b64(e.ciphertext, 32)
  )
    throw new BackupError("the archive's sealed installation key is malformed");
  return e as KeyEnvelope;
}

export async function openKey(envelope: KeyEnvelope, passphrase: string, archiveId: string): Promise<Buffer> {
  const kek = await derive(passphrase, Buffer.from(envelope.salt, 'base64'), envelope.n, envelope.r, envelope.p);
  const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(envelope.iv, 'base64'));
  decipher.setAAD(Buffer.from(archiveId));
  decipher.setAuthTag(Buffer.from(envelope.tag, 'base64'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(envelope.ciphertext, 'base64')), decipher.final()]);
  } catch {
    throw new WrongPassphraseError();
  }
}
