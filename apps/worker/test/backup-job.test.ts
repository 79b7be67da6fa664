import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JOBS } from '@svc/domain';
import { createDomainTestbed } from '@svc/testkit';
import { afterAll, describe, expect, it } from 'vitest';
// The archive format's own reader (the worker needs no @svc/db of its own).
import { verifyArchive } from '../../../packages/db/src/backup/index.ts';
import { createWorker } from '../src/worker.ts';

// The scheduled backup (backups.run) in the worker over a real runtime (in-process queue, or
// BullMQ when REDIS_URL is set): the first run comes when the worker starts.

const work = mkdtempSync(join(tmpdir(), 'svc-backup-job-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function until(done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting: ${what}`);
}

describe('scheduled backups', () => {
  it('write an archive that verifies, holding the key sealed with the configured passphrase, then keep the newest by retention and nothing else of the folder', async () => {
    const dir = join(work, 'archives');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    // Archives of earlier runs (retention reads names, not contents), and an operator's file.
    for (const stamp of ['20010101T000000Z', '20010102T000000Z', '20010103T000000Z'])
      writeFileSync(join(dir, `svc-backup-${stamp}.tar.gz`), 'old');
    writeFileSync(join(dir, 'README.txt'), 'not ours');
    const passphraseFile = join(work, 'passphrase');
    writeFileSync(passphraseFile, 'the scheduled passphrase\n');
    const bed = await createDomainTestbed({
      env: { SVC_BACKUP_DIR: dir, SVC_BACKUP_KEEP: '2', SVC_BACKUP_PASSPHRASE_FILE: passphraseFile },
    });
    const key = Buffer.from(bed.runtime.config.installation_key as string, 'base64');
    const worker = createWorker(bed.runtime, { only: [JOBS.backupsRun] });
    try {
      await worker.start();
      await until(() => readdirSync(dir).filter((n) => n.endsWith('.tar.gz')).length === 2, 'the backup and the retention');
    } finally {
      await worker.stop();
      await bed.close();
    }
    const names = readdirSync(dir).sort();
    const old = ['svc-backup-20010101T000000Z.tar.gz', 'svc-backup-20010102T000000Z.tar.gz', 'svc-backup-20010103T000000Z.tar.gz'];
    const written = names.find((n) => n.endsWith('.tar.gz') && !old.includes(n));
    expect(names.filter((n) => n !== written)).toEqual(['README.txt', 'svc-backup-20010103T000000Z.tar.gz']);
    const verified = await verifyArchive(join(dir, written as string), { passphrase: 'the scheduled passphrase' });
    expect(verified.manifest.installation.key_included).toBe(true);
    expect(verified.key?.equals(key)).toBe(true);
    expect(verified.manifest.tables.find((t) => t.name === 'installation')?.rows).toBe(1);
  });

  it('a failed backup is counted as a failed job run, the worker goes on, and retention removes nothing', async () => {
    const dir = join(work, 'kept');
    mkdirSync(dir);
    const old = ['svc-backup-20010101T000000Z.tar.gz', 'svc-backup-20010102T000000Z.tar.gz'];
    for (const n of old) writeFileSync(join(dir, n), 'old');
    // The passphrase file is missing: every run fails before anything is written.
    const bed = await createDomainTestbed({
      env: { SVC_BACKUP_DIR: dir, SVC_BACKUP_KEEP: '1', SVC_BACKUP_PASSPHRASE_FILE: join(work, 'missing-passphrase') },
    });
    const worker = createWorker(bed.runtime, { only: [JOBS.backupsRun] });
    try {
      await worker.start();
      await until(
        async () =>
          (await bed.runtime.metrics.scrape())
            .split('\n')
            .some(
              (l) =>
                l.startsWith('svc_jobs_total{') && l.includes('job="backups.run"') && l.includes('outcome="retried"') && !l.endsWith(' 0'),
            ),
        'the failed run counted',
      );
    } finally {
      await worker.stop();
      await bed.close();
    }
    expect(readdirSync(dir).sort()).toEqual(old);
  });
});
