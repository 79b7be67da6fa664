import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Db } from '@svc/db';
import type { Clock } from '../shared/clock.ts';
import { hmacHex, safeEqual } from '../shared/secrets.ts';

export class InstallationKeyError extends Error {}

const KEY_FILE = 'installation.key';

function parseKey(text: string, source: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new InstallationKeyError(`${source}: expected 32 bytes in base64, got ${key.length} bytes`);
  return key;
}

/**
 * The installation key encrypts secrets at rest. From SVC_INSTALLATION_KEY when set (split
 * deployments give every replica the same one), else from the file SVC_INSTALLATION_KEY_FILE
 * names (a secrets mount, a path on another disk than the database's), else from
 * `<data_dir>/installation.key`; a missing file is created (mode 0600) on first start.
 * Giving both the key and a file is refused: which one wins would be a guess.
 */
export function loadInstallationKey(opts: {
  installation_key?: string | undefined;
  installation_key_file?: string | undefined;
  data_dir: string;
}): Buffer {
  if (opts.installation_key && opts.installation_key_file)
    throw new InstallationKeyError('SVC_INSTALLATION_KEY and SVC_INSTALLATION_KEY_FILE are both set: give one');
  if (opts.installation_key) return parseKey(opts.installation_key, 'SVC_INSTALLATION_KEY');
  const path = opts.installation_key_file ?? join(opts.data_dir, KEY_FILE);
  if (existsSync(path)) return parseKey(readFileSync(path, 'utf8'), path);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return parseKey(readFileSync(path, 'utf8'), path);
}

const LABEL = 'svc installation key check v1';

/** What the database records of its key (`installation.key_check`): proves a key is the same without storing it. */
export const installationKeyCheck = (key: Buffer): string => hmacHex(key, LABEL);

/**
 * Where this configuration's key comes from and the key, without creating one (loadInstallationKey
 * creates a missing file): `svc restore` decides from it whether an archive's data will open here.
 */
export function findInstallationKey(opts: {
  installation_key?: string | undefined;
  installation_key_file?: string | undefined;
  data_dir: string;
}): { source: 'env'; key: Buffer } | { source: 'file'; path: string; key: Buffer | null } {
  if (opts.installation_key && opts.installation_key_file)
    throw new InstallationKeyError('SVC_INSTALLATION_KEY and SVC_INSTALLATION_KEY_FILE are both set: give one');
  if (opts.installation_key) return { source: 'env', key: parseKey(opts.installation_key, 'SVC_INSTALLATION_KEY') };
  const path = opts.installation_key_file ?? join(opts.data_dir, KEY_FILE);
  return { source: 'file', path, key: existsSync(path) ? parseKey(readFileSync(path, 'utf8'), path) : null };
}

/** Writes a key file as the first start would (folder 0700, file 0600); refuses to overwrite. */
export function writeInstallationKeyFile(path: string, key: Buffer): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
}

/**
 * Records which key this database belongs to on first start and refuses a different key
 * later: a replica with the wrong key would otherwise fail to decrypt every secret.
 */
export async function bindInstallationKey(db: Db, key: Buffer, clock: Clock): Promise<void> {
  const check = installationKeyCheck(key);
  await db
    .insertInto('installation')
    .values({ id: 1, key_check: check, created_at: clock.now() })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const row = await db.selectFrom('installation').select('key_check').where('id', '=', 1).executeTakeFirstOrThrow();
  if (!safeEqual(row.key_check, check)) {
    throw new InstallationKeyError(
      'the installation key (SVC_INSTALLATION_KEY, SVC_INSTALLATION_KEY_FILE or <data_dir>/installation.key) is not the one this database was initialised with; secrets could not be decrypted, so the service refuses to start',
    );
  }
}
