import { boundedFileDir } from './bounded-file-dir.ts';
import { type FileSeal, SEAL_OVERHEAD } from './file-seal.ts';

/**
 * Deflated pieces of big DesiredStates kept on disk (`<data_dir>/gzip-pieces`), so a restarted
 * gateway deflates again only what changed while it was down: cached-gzip.ts looks here when a
 * piece is not in memory and writes each piece it deflates. Pieces are named by the SHA-256 of
 * the raw bytes they deflate and the level (the memory cache's key); a file is the deflated
 * bytes sealed with the name (file-seal.ts: AES-256-GCM under a key derived from the
 * installation key; a piece holds users' credentials and inbound keys the database keeps
 * sealed), read back only when it opens (a damaged file is deflated again and replaced).
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

export function createGzipPieceStore(opts: {
  dir: string;
  maxBytes: number;
  seal: FileSeal;
  warn: (err: unknown, msg: string) => void;
}): GzipPieceStore {
  const files = boundedFileDir({ ...opts, ext: '.gzp', what: 'gzip pieces' });
  const nameOf = (key: string) => key.replace(':', '-').replaceAll('/', '_').replaceAll('+', '.').replaceAll('=', '');
  const context = (key: string) => `gzip piece\0${key}`;
  return {
    async get(key) {
      const file = await files.read(nameOf(key), 0, (_head, size) => (size > SEAL_OVERHEAD ? size : null));
      return file ? opts.seal.open(context(key), file.body) : undefined;
    },
    put(key, deflated) {
      void files.write(nameOf(key), opts.seal.seal(context(key), deflated));
    },
    stats: () => files.stats(),
    flush: () => files.flush(),
  };
}
