import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from './data-dir-lock.ts';

const lockPath = () => join(mkdtempSync(join(tmpdir(), 'svc-lock-')), 'pg.lock');

describe('the embedded database is opened by one process at a time', () => {
  it('refuses while a live process holds the lock, naming it', () => {
    const path = lockPath();
    // The parent of this test process is alive and is not us.
    writeFileSync(path, JSON.stringify({ pid: process.ppid, start: null }));
    expect(() => lockDataDir(path)).toThrow(new RegExp(`in use by process ${process.ppid}`));
  });

  it('refuses a second open inside the same process', () => {
    const path = lockPath();
    const release = lockDataDir(path);
    expect(() => lockDataDir(path)).toThrow(DataDirLockedError);
    release();
    lockDataDir(path)();
  });

  it('takes over a lock whose process is gone', () => {
    const path = lockPath();
    writeFileSync(path, JSON.stringify({ pid: 2 ** 22 + 12345, start: '1' }));
    expect(() => lockDataDir(path)()).not.toThrow();
  });

  it('takes over a lock whose pid was reused by another process (other start time)', () => {
    const path = lockPath();
    writeFileSync(path, JSON.stringify({ pid: process.ppid, start: 'not-the-real-start-time' }));
    expect(() => lockDataDir(path)()).not.toThrow();
  });

  it('takes over a lock left by an earlier process that had our pid (a restarted container)', () => {
    const path = lockPath();
    writeFileSync(path, JSON.stringify({ pid: process.pid, start: 'earlier' }));
    expect(() => lockDataDir(path)()).not.toThrow();
  });
});
