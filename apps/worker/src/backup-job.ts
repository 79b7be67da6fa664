import { readFileSync } from 'node:fs';
import { type DomainContext, KEY_MISSING_NOTE, loadInstallationKey, readPassphraseFile, runScheduledBackup } from '@svc/domain';
import type { Runtime } from '@svc/runtime';

const APP_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * `backups.run` (docs/backups.md): one archive of the database into backup.dir, then retention.
 * A failure is logged with its reason and fails the job: the queue counts it
 * (svc_jobs_total{job="backups.run"}) and retries it with its backoff; the worker goes on, and
 * nothing is removed after a failed run.
 */
export function backupJob(rt: Runtime, ctx: DomainContext): () => Promise<void> {
  const cfg = rt.config.backup;
  return async () => {
    const dir = cfg.dir as string;
    try {
      const done = await runScheduledBackup(ctx, {
        dir,
        keep: cfg.keep,
        maxAgeDays: cfg.max_age_days,
        passphraseFile: cfg.passphrase_file,
        installationKey: cfg.passphrase_file ? loadInstallationKey(rt.config) : Buffer.alloc(0),
        appVersion: APP_VERSION,
        store: rt.database.kind,
      });
      rt.log.info({ file: done.file, bytes: done.bytes, key_included: done.keyIncluded, removed: done.removed }, 'backup written');
    } catch (err) {
      rt.log.error({ err, dir }, 'backup failed; nothing was removed, the job is retried and the next scheduled run tries again');
      throw err;
    }
  };
}

/** Said once when the schedule starts: what the archives will and will not hold. */
export function announceBackups(rt: Runtime): void {
  const cfg = rt.config.backup;
  rt.log.info(
    {
      dir: cfg.dir,
      every_hours: cfg.every_hours,
      keep: cfg.keep,
      max_age_days: cfg.max_age_days,
      key_included: Boolean(cfg.passphrase_file),
    },
    'scheduled backups on',
  );
  if (!cfg.passphrase_file) {
    rt.log.warn({ dir: cfg.dir }, KEY_MISSING_NOTE);
    return;
  }
  // Said now rather than at the first run's failure: a passphrase file that will not do.
  try {
    readPassphraseFile(cfg.passphrase_file);
  } catch (err) {
    rt.log.error(
      { err, passphrase_file: cfg.passphrase_file },
      'backup.passphrase_file will not do: every scheduled backup will fail until it is fixed',
    );
  }
}
