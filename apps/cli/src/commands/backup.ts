import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '@svc/config';
import { backupFileName, connectDatabase, DataDirLockedError, KEY_MISSING_WARNING, writeBackup } from '@svc/db';
import { findInstallationKey, installationKeyCheck } from '@svc/domain';
import { UsageError } from '../args.ts';
import { APP_VERSION } from './app-version.ts';
import type { BackupArgs } from './backup-args.ts';
import { readPassphrase } from './backup-passphrase.ts';

/** The archive's path: --out as a file, a folder to put a generated name in, or the working directory. */
function destination(out: string | undefined, now: Date): string {
  const name = backupFileName(now);
  if (out === undefined) return resolve(name);
  if (existsSync(out) && statSync(out).isDirectory()) return resolve(join(out, name));
  if (existsSync(out)) throw new UsageError(`${out} exists: a backup never overwrites a file (give a new name or a folder)`);
  return resolve(out);
}

/**
 * `svc backup`: a consistent archive of the database (docs/backups.md), taken directly from
 * the data store as the other commands work. The embedded database can be open in one
 * process only: while `svc start` runs on it, this is refused and the running server's
 * scheduled backup (SVC_BACKUP_DIR) is the way.
 */
export async function backup(config: Config, args: BackupArgs): Promise<void> {
  const now = new Date();
  const file = destination(args.out, now);
  let includeKey: { key: Buffer; passphrase: string; keyCheck: (key: Buffer) => string } | undefined;
  if (args.includeKey) {
    const found = findInstallationKey(config);
    if (!found.key)
      throw new UsageError(
        `--include-key: there is no installation key at ${found.source === 'file' ? found.path : 'SVC_INSTALLATION_KEY'}`,
      );
    const passphrase = await readPassphrase({ file: args.passphraseFile, confirm: true, why: '--include-key' });
    includeKey = { key: found.key, passphrase, keyCheck: installationKeyCheck };
  }
  let handle: Awaited<ReturnType<typeof connectDatabase>>;
  try {
    handle = await connectDatabase({ url: config.database.url, dataDir: config.data_dir, poolSize: 2 });
  } catch (err) {
    if (err instanceof DataDirLockedError)
      throw new DataDirLockedError(
        `${err.message}. The embedded database can be open in one process only: stop the server for svc backup, or let it back itself up (SVC_BACKUP_DIR, docs/backups.md)`,
      );
    throw err;
  }
  try {
    const result = await writeBackup(handle.db, {
      file,
      appVersion: APP_VERSION,
      store: handle.kind,
      ...(includeKey ? { includeKey } : {}),
      now: () => now,
    });
    const rows = result.manifest.tables.reduce((n, t) => n + t.rows, 0);
    process.stdout.write(
      `wrote ${result.file} (${result.bytes} bytes; ${result.manifest.tables.length} tables, ${rows} rows; schema ${result.manifest.schema.version})\n`,
    );
    if (result.manifest.installation.key_included)
      process.stdout.write(
        'the installation key is in the archive, sealed with your passphrase: without the passphrase it cannot be restored\n',
      );
    else process.stderr.write(`\nWARNING: ${KEY_MISSING_WARNING}.\n\n`);
  } finally {
    await handle.destroy();
  }
}
