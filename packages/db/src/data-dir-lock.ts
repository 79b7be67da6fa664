import { closeSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';

export class DataDirLockedError extends Error {}

/** Start time of a process in clock ticks since boot (Linux), so a reused pid is told apart. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) may contain spaces, so count after its ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const held = new Set<string>();

function holder(text: string): { pid: number; start: string | null } | null {
  try {
    const parsed = JSON.parse(text) as { pid?: unknown; start?: unknown };
    return typeof parsed.pid === 'number' ? { pid: parsed.pid, start: typeof parsed.start === 'string' ? parsed.start : null } : null;
  } catch {
    return null;
  }
}

/**
 * PGlite is an embedded database: two processes opening the same files corrupt them. The
 * first opener records its pid (and start time) here; anyone else (a second `svc start`,
 * or `svc admin create` while the server runs, or a second open in this process) is refused
 * with a clear message. A lock whose process is gone, or whose pid now belongs to another
 * process (containers restart as pid 1), is taken over.
 */
export function lockDataDir(path: string): () => void {
  if (held.has(path))
    throw new DataDirLockedError(`the embedded database at ${path.replace(/\/[^/]+$/, '')} is already open in this process`);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, start: startTimeOf(process.pid) }));
      closeSync(fd);
      held.add(path);
      return () => {
        held.delete(path);
        rmSync(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let seen: string;
      try {
        seen = readFileSync(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw e;
      }
      const owner = holder(seen);
      const live =
        owner && owner.pid !== process.pid && alive(owner.pid) && (owner.start === null || owner.start === startTimeOf(owner.pid));
      if (live) {
        throw new DataDirLockedError(
          `the embedded database in ${path.replace(/\/[^/]+$/, '')} is in use by process ${owner.pid} (a running svc start?); stop it first, or point this command at DATABASE_URL`,
        );
      }
      // Take the stale lock over by moving it aside, then check that what we moved is the stale
      // lock we judged: if another starter replaced it meanwhile, put theirs back and give way.
      const aside = `${path}.stale-${process.pid}-${Date.now()}`;
      try {
        renameSync(path, aside);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw e;
      }
      if (readFileSync(aside, 'utf8') !== seen) {
        renameSync(aside, path);
        throw new DataDirLockedError(`another process is opening the embedded database in ${path.replace(/\/[^/]+$/, '')}`);
      }
      rmSync(aside, { force: true });
    }
  }
  throw new DataDirLockedError(`could not lock ${path}`);
}
