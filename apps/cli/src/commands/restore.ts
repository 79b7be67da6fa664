import { renameSync } from 'node:fs';
import type { Config } from '@svc/config';
import { connectDatabase, DataDirLockedError, type Manifest, readManifest, restoreBackup, targetTables, verifyArchive } from '@svc/db';
import { findInstallationKey, installationKeyCheck, writeInstallationKeyFile } from '@svc/domain';
import { UsageError } from '../args.ts';
import type { BackupArgs } from './backup-args.ts';
import { readPassphrase } from './backup-passphrase.ts';

export class RestoreRefusedError extends Error {}

type KeyPlan = { write: null } | { write: { path: string; key: Buffer; replacing: boolean } };

/**
 * Whether the restored database's sealed secrets will open with the key this configuration
 * gives, decided before any data is touched. The database remembers its key's check
 * (`installation.key_check`) and refuses to start with another, so a restore that would leave
 * data and key apart is refused: with the key in the archive, it is written where this
 * configuration reads it (an existing different key file only with --force, kept aside);
 * without it, the key configured here must be the archive's.
 */
function planKey(config: Config, manifest: Manifest, archiveKey: Buffer | null, force: boolean): KeyPlan {
  const here = findInstallationKey(config);
  const wanted = manifest.installation.key_check;
  const matches = (key: Buffer) => wanted === null || installationKeyCheck(key) === wanted;
  if (archiveKey) {
    if (here.key && installationKeyCheck(here.key) === installationKeyCheck(archiveKey)) return { write: null };
    if (here.source === 'env')
      throw new RestoreRefusedError(
        "SVC_INSTALLATION_KEY is set to another key than the archive's: unset it (the archive's key is then written to the key file) or set it to the key of the installation the backup was taken from; nothing was changed",
      );
    if (here.key && !force)
      throw new RestoreRefusedError(
        `${here.path} holds another installation key than the archive's: with --force it is moved aside and the archive's key written there; nothing was changed`,
      );
    return { write: { path: here.path, key: archiveKey, replacing: here.key !== null } };
  }
  if (here.key && matches(here.key)) return { write: null };
  if (wanted === null) return { write: null };
  const where = here.source === 'env' ? 'SVC_INSTALLATION_KEY' : here.path;
  throw new RestoreRefusedError(
    here.key
      ? `the installation key configured here (${where}) is not the one the archive's database was sealed with: its secrets would not open and the service would refuse to start. Configure that installation's key (SVC_INSTALLATION_KEY or SVC_INSTALLATION_KEY_FILE), or restore an archive taken with --include-key; nothing was changed`
      : `the archive does not contain the installation key and none is configured here (${where} is missing): configure the key of the installation the backup was taken from (SVC_INSTALLATION_KEY or SVC_INSTALLATION_KEY_FILE), or restore an archive taken with --include-key; nothing was changed`,
  );
}

/**
 * `svc restore FILE`: the whole archive is checked first (verifyArchive: manifest, checksums,
 * schema version, passphrase), then the key decided, then the target opened: an empty
 * database, or any with --force; the restore is one transaction, then migrations run forward.
 */
export async function restore(config: Config, args: BackupArgs): Promise<void> {
  const file = args.file as string;
  const claimed = await readManifest(file);
  const passphrase = claimed.installation.key_included
    ? await readPassphrase({ file: args.passphraseFile, confirm: false, why: 'the archive holds the installation key' })
    : undefined;
  if (!claimed.installation.key_included && args.passphraseFile)
    throw new UsageError('the archive holds no installation key: --passphrase-file has nothing to open');
  const verified = await verifyArchive(file, { passphrase, keyCheck: installationKeyCheck });
  const plan = planKey(config, verified.manifest, verified.key, args.force);
  let handle: Awaited<ReturnType<typeof connectDatabase>>;
  try {
    handle = await connectDatabase({ url: config.database.url, dataDir: config.data_dir, poolSize: 2 });
  } catch (err) {
    if (err instanceof DataDirLockedError) throw new DataDirLockedError(`${err.message}: stop the server before restoring`);
    throw err;
  }
  try {
    const existing = await targetTables(handle.db);
    if (existing.length && !args.force)
      throw new RestoreRefusedError(
        `the database at ${handle.location} is not empty (${existing.length} tables): a restore replaces all of it; stop every svc process using it and confirm with --force, or restore into an empty database; nothing was changed`,
      );
    const result = await restoreBackup(handle.db, verified, { force: args.force });
    if (plan.write) {
      if (plan.write.replacing) {
        const aside = `${plan.write.path}.replaced-${new Date().toISOString().replace(/[-:.]/g, '')}`;
        renameSync(plan.write.path, aside);
        process.stdout.write(`the installation key that was at ${plan.write.path} is now at ${aside}\n`);
      }
      writeInstallationKeyFile(plan.write.path, plan.write.key);
      process.stdout.write(`installation key from the archive written to ${plan.write.path}\n`);
    }
    const m = verified.manifest;
    process.stdout.write(
      `restored ${file} (taken ${m.created_at} by svc ${m.app_version} on ${m.store}; ${result.tables} tables, ${result.rows} rows) into ${handle.location}` +
        (result.migrated.length ? `; then migrated from ${m.schema.version}: ${result.migrated.join(', ')}` : '') +
        '\n',
    );
  } finally {
    await handle.destroy();
  }
}
