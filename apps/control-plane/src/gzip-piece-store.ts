import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Deflated pieces of big DesiredStates kept on disk (`<data_dir>/gzip-pieces`), so a restarted
 * gateway deflates again only what changed while it was down: cached-gzip.ts looks here when a
 * piece is not in memory and writes each piece it deflates. Pieces are named by the SHA-256 of
 * the raw bytes they deflate and the level (the memory cache's key); a file is the SHA-256 of
 * its deflated bytes, then those bytes, written to a temporary name and renamed, and read back
 * only when the digest matches (a torn or damaged file is deflated again and replaced).
 *
 * At most `maxBytes` are kept: past it, the files least recently written go first (a piece
 * found here is touched again by being written anew only when it was deflated; the order is
 * good enough for what is a cache). Every failure of the disk is logged once and leaves the
 * gateway deflating as it would without the store.
 */
export interface GzipPieceStore {
  get(key: string): Promise<Buffer | undefined>;
  put(key: string, deflated: Buffer): void;
  /** Files written since start, and bytes held now (as far as this process knows); pieces found are counted by cached-gzip.ts. */
  stats(): { written: number; heldBytes: number };
  /** Waits for the writes and the prune under way. */
  flush(): Promise<void>;
}

const DIGEST = 32;

export function createGzipPieceStore(opts: { dir: string; maxBytes: number; warn: (err: unknown, msg: string) => void }): GzipPieceStore {
  const { dir, maxBytes } = opts;
  let ready: Promise<boolean> | undefined;
  let held = 0;
  let written = 0;
  let warned = false;
  let pruning: Promise<void> | undefined;
  const pending = new Set<Promise<void>>();
  const warnOnce = (err: unknown, msg: string) => {
    if (warned) return;
    warned = true;
    opts.warn(err, msg);
  };
  const fileOf = (key: string) => join(dir, `${key.replace(':', '-').replaceAll('/', '_').replaceAll('+', '.').replaceAll('=', '')}.gzp`);

  /** Creates the directory and counts what it holds (once, on first use). */
  const open = () => {
    ready ??= (async () => {
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        // Temporary files a stopped process left mid-write are never renamed: removed here.
        for (const name of await readdir(dir)) if (name.endsWith('.tmp')) await unlink(join(dir, name)).catch(() => {});
        held = (await listing()).reduce((sum, f) => sum + f.size, 0);
        if (held > maxBytes) await prune();
        return true;
      } catch (err) {
        warnOnce(err, `gzip pieces not kept on disk: ${dir} is not usable`);
        return false;
      }
    })();
    return ready;
  };
  const listing = async () => {
    const out: Array<{ path: string; size: number; mtimeMs: number }> = [];
    for (const name of await readdir(dir)) {
      if (!name.endsWith('.gzp')) continue;
      const path = join(dir, name);
      const s = await stat(path).catch(() => null);
      if (s?.isFile()) out.push({ path, size: s.size, mtimeMs: s.mtimeMs });
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
      total -= f.size;
    }
    // What the directory held when listed, less what went, plus what was written meanwhile.
    held = total + Math.max(0, held - heldBefore);
  };

  /** One prune at a time; another after it when the bound was passed again meanwhile. */
  const schedulePrune = () => {
    if (pruning) return;
    pruning = prune()
      .catch((err) => warnOnce(err, `gzip pieces in ${dir} not pruned`))
      .finally(() => {
        pruning = undefined;
        if (held > maxBytes) schedulePrune();
      });
  };

  return {
    async get(key) {
      if (maxBytes <= 0 || !(await open())) return undefined;
      let file: Buffer;
      try {
        file = await readFile(fileOf(key));
      } catch {
        return undefined;
      }
      const body = file.subarray(DIGEST);
      if (file.length <= DIGEST || !createHash('sha256').update(body).digest().equals(file.subarray(0, DIGEST))) return undefined;
      return Buffer.from(body);
    },
    put(key, deflated) {
      if (maxBytes <= 0 || deflated.length + DIGEST > maxBytes) return;
      const write = (async () => {
        if (!(await open())) return;
        const path = fileOf(key);
        const temp = `${path}.${process.pid}.${written}.tmp`;
        try {
          await writeFile(temp, Buffer.concat([createHash('sha256').update(deflated).digest(), deflated]), { mode: 0o600 });
          await rename(temp, path);
          written++;
          held += deflated.length + DIGEST;
        } catch (err) {
          await unlink(temp).catch(() => {});
          warnOnce(err, `a gzip piece not written to ${dir}`);
          return;
        }
        if (held > maxBytes) schedulePrune();
      })();
      pending.add(write);
      void write.finally(() => pending.delete(write));
    },
    stats: () => ({ written, heldBytes: held }),
    async flush() {
      while (pending.size > 0 || pruning) await Promise.all([...pending, pruning]);
    },
  };
}
