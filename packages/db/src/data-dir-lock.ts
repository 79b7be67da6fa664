import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

export class DataDirLockedError extends Error {}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * PGlite is an embedded database: two processes opening the same files corrupt them. The
 * first process to open the data dir writes its pid here; another (a second `svc start`,
 * or `svc admin create` while the server runs) is refused with a clear message. A lock left
 * by a process that no longer exists is taken over.
 */
export function lockDataDir(path: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (pid && pid !== process.pid && alive(pid)) {
        throw new DataDirLockedError(
          `the embedded database in ${path.replace(/\/[^/]+$/, '')} is in use by process ${pid} (a running svc start?); stop it first, or run this command against DATABASE_URL`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new DataDirLockedError(`could not lock ${path}`);
}
