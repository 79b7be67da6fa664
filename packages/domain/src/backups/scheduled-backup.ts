import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { backupFileName, checkPassphrase, KEY_MISSING_WARNING, pruneBackups, writeBackup } from '@svc/db';
import { installationKeyCheck } from '../installation/installation-key.ts';
import type { DomainContext } from '../shared/context.ts';

/** Logged when scheduled archives will not hold the installation key. */
export const KEY_MISSING_NOTE = `scheduled backups without the installation key (backup.passphrase_file unset): ${KEY_MISSING_WARNING}`;

/** The passphrase on a file's first line (backup.passphrase_file), checked as sealing requires. */
export function readPassphraseFile(path: string): string {
  const passphrase = readFileSync(path, 'utf8').split(/\r?\n/)[0] ?? '';
  checkPassphrase(passphrase);
  return passphrase;
}

export interface ScheduledBackupOptions {
  /** Folder the archives go to (created 0700 if missing). */
  dir: string;
  /** Retention: the newest `keep` archives, none older than `maxAgeDays` (0: no age limit); the newest always stays. */
  keep: number;
  maxAgeDays: number;
  /** With it, the installation key goes into each archive sealed with this file's first line (key-envelope.ts). */
  passphraseFile?: string | undefined;
  /** The installation key (only read when passphraseFile is set). */
  installationKey: Buffer;
  appVersion: string;
  store: 'pglite' | 'postgres';
}

export interface ScheduledBackupResult {
  file: string;
  bytes: number;
  keyIncluded: boolean;
  /** Archives (and leftovers of interrupted runs) removed by retention. */
  removed: string[];
}

/**
 * One scheduled backup (worker job `backups.run`): an archive of the running installation's
 * database through its own connection (one consistent snapshot; on the embedded database
 * through the server's session, the only one there may be), then retention. Retention runs
 * only after an archive was written, so a failing backup never removes an older good one,
 * and it never removes the newest.
 */
export async function runScheduledBackup(ctx: DomainContext, opts: ScheduledBackupOptions): Promise<ScheduledBackupResult> {
  mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  const now = ctx.clock.now();
  let file = join(opts.dir, backupFileName(now));
  for (let n = 1; existsSync(file); n++) file = join(opts.dir, backupFileName(now).replace(/\.tar\.gz$/, `-${n}.tar.gz`));
  const passphrase = opts.passphraseFile ? readPassphraseFile(opts.passphraseFile) : undefined;
  const result = await writeBackup(ctx.db, {
    file,
    appVersion: opts.appVersion,
    store: opts.store,
    now: () => now,
    ...(passphrase !== undefined ? { includeKey: { key: opts.installationKey, passphrase, keyCheck: installationKeyCheck } } : {}),
  });
  // The archive is written: a failing clean-up must not fail (and so repeat) the backup.
  let removed: string[] = [];
  try {
    removed = await pruneBackups(opts.dir, { keep: opts.keep, maxAgeDays: opts.maxAgeDays }, now);
  } catch (err) {
    ctx.log.warn({ err, dir: opts.dir }, 'backup written, but old archives could not be removed');
  }
  return { file: result.file, bytes: result.bytes, keyIncluded: result.manifest.installation.key_included, removed };
}
