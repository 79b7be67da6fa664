import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** `svc-backup-20261125T065300Z.tar.gz`: sorts by time, no characters a file system minds. */
export function backupFileName(at: Date): string {
  return `svc-backup-${at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}.tar.gz`;
}

const ARCHIVE = /^svc-backup-(\d{8}T\d{6}Z)(?:-\d+)?\.tar\.gz$/;
/** What a backup leaves while it runs (or after a crash): its partial archive and staging folder. */
const LEFTOVER = /^(?:svc-backup-.*\.tar\.gz\.partial|\.svc-backup-.*\.tar\.gz\.parts-.*)$/;

export interface RetentionPolicy {
  /** Keep the newest this many (at least 1). */
  keep: number;
  /** Remove archives older than this many days (0: no age limit); the newest is kept whatever its age. */
  maxAgeDays: number;
}

/**
 * Applies the retention policy to a folder of archives, after a backup succeeded. Only files
 * named as backups name them are considered; the newest archive is never removed (a policy
 * that would remove everything keeps it), nor anything else in the folder. Leftovers of
 * interrupted backups older than a day go too. Returns the removed names.
 */
export async function pruneBackups(dir: string, policy: RetentionPolicy, now: Date): Promise<string[]> {
  const names = await readdir(dir);
  const archives = names
    .filter((n) => ARCHIVE.test(n))
    .sort()
    .reverse();
  const keep = Math.max(1, policy.keep);
  const cutoff = policy.maxAgeDays > 0 ? now.getTime() - policy.maxAgeDays * 86_400_000 : Number.NEGATIVE_INFINITY;
  const remove: string[] = [];
  archives.forEach((name, i) => {
    if (i === 0) return;
    const stamp = ARCHIVE.exec(name)?.[1] as string;
    const taken = Date.parse(
      `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`,
    );
    if (i >= keep || taken < cutoff) remove.push(name);
  });
  for (const n of names.filter((x) => LEFTOVER.test(x))) {
    const { mtimeMs } = await stat(join(dir, n));
    if (mtimeMs < now.getTime() - 86_400_000) remove.push(n);
  }
  for (const n of remove) await rm(join(dir, n), { recursive: true, force: true });
  return remove;
}
