import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backupFileName, pruneBackups } from './retention.ts';

const root = mkdtempSync(join(tmpdir(), 'svc-retention-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const NOW = new Date('2026-11-25T12:00:00Z');
let n = 0;

function folder(days: number[], others: string[] = []): string {
  const dir = join(root, `d${++n}`);
  mkdirSync(dir);
  for (const d of days) writeFileSync(join(dir, backupFileName(new Date(NOW.getTime() - d * 86_400_000))), 'x');
  for (const o of others) writeFileSync(join(dir, o), 'x');
  return dir;
}

const archives = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.startsWith('svc-backup-') && f.endsWith('.tar.gz'))
    .sort();

describe('backup retention', () => {
  it('names archives by the time they were taken, in an order that sorts by time', () => {
    expect(backupFileName(new Date('2026-11-25T06:53:00.123Z'))).toBe('svc-backup-20261125T065300Z.tar.gz');
  });

  it('keeps the newest N', async () => {
    const dir = folder([0, 1, 2, 3, 4]);
    const before = archives(dir);
    await pruneBackups(dir, { keep: 2, maxAgeDays: 0 }, NOW);
    expect(archives(dir)).toEqual(before.slice(-2));
  });

  it('removes archives past the age limit, but never the newest, however old', async () => {
    const young = folder([1, 5, 10]);
    await pruneBackups(young, { keep: 10, maxAgeDays: 7 }, NOW);
    expect(archives(young)).toHaveLength(2);
    const stale = folder([30, 40]);
    const newest = archives(stale).at(-1);
    await pruneBackups(stale, { keep: 10, maxAgeDays: 7 }, NOW);
    expect(archives(stale)).toEqual([newest]);
  });

  it('leaves every other file alone, and clears leftovers of interrupted runs after a day', async () => {
    const dir = folder([0, 1], ['notes.txt', 'svc-backup-x.tar.gz.partial', 'svc-backup-y.tar.gz.partial']);
    const old = new Date(NOW.getTime() - 2 * 86_400_000);
    utimesSync(join(dir, 'svc-backup-x.tar.gz.partial'), old, old);
    utimesSync(join(dir, 'svc-backup-y.tar.gz.partial'), NOW, NOW);
    await pruneBackups(dir, { keep: 1, maxAgeDays: 0 }, NOW);
    expect(readdirSync(dir).sort()).toEqual(['notes.txt', backupFileName(NOW), 'svc-backup-y.tar.gz.partial']);
  });
});
