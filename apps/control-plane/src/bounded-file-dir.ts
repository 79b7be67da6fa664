import { mkdir, open as openFile, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A directory of cache files the gateway keeps across restarts (gzip-piece-store.ts,
 * last-push-store.ts): created on first use (0700), files written to a temporary name and
 * renamed (a reader never sees half a file; temporary files a stopped process left are removed
 * at open), and at most `maxBytes` held: past it, the files least recently written go first,
 * down to three quarters of the bound. Every failure of the disk is logged once and reads as a
 * miss: the gateway works on as it would without the directory.
 */
export interface BoundedFileDir {
  /**
   * A file's first `headBytes`, then the `bodyBytes(head, fileSize)` bytes after them (null:
   * the head says not to read on). Undefined when there is no such file or it is shorter.
   */
  read(
    name: string,
    headBytes: number,
    bodyBytes: (head: Buffer, fileSize: number) => number | null,
  ): Promise<{ head: Buffer; body: Buffer } | undefined>;
  /** Writes (or replaces) a file; settles when it is in place or the write failed (logged). */
  write(name: string, parts: readonly Uint8Array[]): Promise<void>;
  /** Files written since start, and bytes held now (as far as this process knows). */
  stats(): { written: number; heldBytes: number };
  /** Waits for the writes and the prune under way. */
  flush(): Promise<void>;
}

export function boundedFileDir(opts: {
  dir: string;
  maxBytes: number;
  /** The files' suffix (only those are counted and pruned). */
  ext: string;
  /** What the files are, for the log line: `${what} not kept on disk: …`. */
  what: string;
  warn: (err: unknown, msg: string) => void;
}): BoundedFileDir {
  const { dir, maxBytes, ext, what } = opts;
  let ready: Promise<boolean> | undefined;
  let held = 0;
  let written = 0;
  let serial = 0;
  let warned = false;
  let pruning: Promise<void> | undefined;
  const pending = new Set<Promise<void>>();
  /** The files there (names without the suffix): a name not here is not read for (no open() per miss). */
  const present = new Set<string>();
  const warnOnce = (err: unknown, msg: string) => {
    if (warned) return;
    warned = true;
    opts.warn(err, msg);
  };

  const listing = async () => {
    const out: Array<{ name: string; path: string; size: number; mtimeMs: number }> = [];
    for (const file of await readdir(dir)) {
      if (!file.endsWith(ext)) continue;
      const path = join(dir, file);
      const s = await stat(path).catch(() => null);
      if (s?.isFile()) out.push({ name: file.slice(0, -ext.length), path, size: s.size, mtimeMs: s.mtimeMs });
    }
    return out;
  };
  /** Removes the oldest files until three quarters of the bound are left. */
  const prune = async () => {
    const heldBefore = held;
    const files = (await listing()).sort((a, b) => a.mtimeMs - b.mtimeMs);
    let total = files.reduce((sum, f) => sum + f.size, 0);
    for (const f of files) {
      if (total <= (maxBytes * 3) / 4) break;
      await unlink(f.path).catch(() => {});
      present.delete(f.name);
      total -= f.size;
    }
    // What the directory held when listed, less what went, plus what was written meanwhile.
    held = total + Math.max(0, held - heldBefore);
  };
  /** One prune at a time; another after it when the bound was passed again meanwhile. */
  const schedulePrune = () => {
    if (pruning) return;
    pruning = prune()
      .catch((err) => warnOnce(err, `${what} in ${dir} not pruned`))
      .finally(() => {
        pruning = undefined;
        if (held > maxBytes) schedulePrune();
      });
  };
  /** Creates the directory and counts what it holds (once, on first use). */
  const open = () => {
    ready ??= (async () => {
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        for (const name of await readdir(dir)) if (name.endsWith('.tmp')) await unlink(join(dir, name)).catch(() => {});
        const files = await listing();
        for (const f of files) present.add(f.name);
        held = files.reduce((sum, f) => sum + f.size, 0);
        if (held > maxBytes) await prune();
        return true;
      } catch (err) {
        warnOnce(err, `${what} not kept on disk: ${dir} is not usable`);
        return false;
      }
    })();
    return ready;
  };

  return {
    async read(name, headBytes, bodyBytes) {
      if (maxBytes <= 0 || !(await open()) || !present.has(name)) return undefined;
      let file: Awaited<ReturnType<typeof openFile>>;
      try {
        file = await openFile(join(dir, `${name}${ext}`), 'r');
      } catch {
        return undefined;
      }
      try {
        const size = (await file.stat()).size;
        if (size < headBytes) return undefined;
        const head = Buffer.alloc(headBytes);
        if ((await file.read(head, 0, headBytes, 0)).bytesRead !== headBytes) return undefined;
        const length = bodyBytes(head, size);
        if (length === null || length < 0 || headBytes + length > size) return undefined;
        const body = Buffer.allocUnsafe(length);
        let got = 0;
        while (got < length) {
          const { bytesRead } = await file.read(body, got, length - got, headBytes + got);
          if (bytesRead === 0) return undefined;
          got += bytesRead;
        }
        return { head, body };
      } catch {
        return undefined;
      } finally {
        await file.close().catch(() => {});
      }
    },
    write(name, parts) {
      const size = parts.reduce((sum, p) => sum + p.length, 0);
      if (maxBytes <= 0 || size > maxBytes) return Promise.resolve();
      const write = (async () => {
        if (!(await open())) return;
        const path = join(dir, `${name}${ext}`);
        const temp = `${path}.${process.pid}.${serial++}.tmp`;
        try {
          await writeFile(temp, parts, { mode: 0o600 });
          const replaced = await stat(path).catch(() => null);
          await rename(temp, path);
          present.add(name);
          written++;
          held += size - (replaced?.size ?? 0);
        } catch (err) {
          await unlink(temp).catch(() => {});
          warnOnce(err, `${what} not written to ${dir}`);
          return;
        }
        if (held > maxBytes) schedulePrune();
      })();
      pending.add(write);
      void write.finally(() => pending.delete(write));
      return write;
    },
    stats: () => ({ written, heldBytes: held }),
    async flush() {
      while (pending.size > 0 || pruning) await Promise.all([...pending, pruning]);
    },
  };
}
