import { createHash } from 'node:crypto';
import { boundedFileDir } from './bounded-file-dir.ts';

/**
 * Deflated pieces of big DesiredStates kept on disk (`<data_dir>/gzip-pieces`), so a restarted
 * gateway deflates again only what changed while it was down: cached-gzip.ts looks here when a
 * piece is not in memory and writes each piece it deflates. Pieces are named by the SHA-256 of
 * the raw bytes they deflate and the level (the memory cache's key); a file is the SHA-256 of
 * its deflated bytes, then those bytes, and is read back only when the digest matches (a
 * damaged file is deflated again and replaced).
 *
 * At most `maxBytes` are kept, the files least recently written removed first (a piece found
 * here is touched again by being written anew only when it was deflated; the order is good
 * enough for what is a cache): bounded-file-dir.ts, which also logs a failure of the disk once
 * and leaves the gateway deflating as it would without the store.
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
  const files = boundedFileDir({ ...opts, ext: '.gzp', what: 'gzip pieces' });
  const nameOf = (key: string) => key.replace(':', '-').replaceAll('/', '_').replaceAll('+', '.').replaceAll('=', '');
  return {
    async get(key) {
      const file = await files.read(nameOf(key), DIGEST, (_head, size) => (size > DIGEST ? size - DIGEST : null));
      if (!file || !createHash('sha256').update(file.body).digest().equals(file.head)) return undefined;
      return file.body;
    },
    put(key, deflated) {
      void files.write(nameOf(key), [createHash('sha256').update(deflated).digest(), deflated]);
    },
    stats: () => files.stats(),
    flush: () => files.flush(),
  };
}
