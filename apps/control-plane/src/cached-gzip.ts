import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import * as zlib from 'node:zlib';
import { type CutOptions, contentCuts, DEFAULT_CUTS } from './content-cuts.ts';
import type { GzipPieceStore } from './gzip-piece-store.ts';
import { oneChunk, parallelCompress } from './parallel-gzip.ts';

/** Below this a message goes through parallelCompress (one zlib call): nothing worth keeping. */
const CACHE_FROM_BYTES = 1024 * 1024;
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final block (what deflate writes for Z_FINISH with no input): ends the deflate stream. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);

/**
 * What a compressor makes: one buffer, or buffers that make the compressed message in order
 * (the grpc-js patch writes them after the frame header as they are: a big message's gzip is
 * its kept pieces, not a copy of them).
 */
export type Compressed = Buffer | readonly Buffer[];
type Done = (error: Error | null, compressed?: Compressed) => void;
/** How many bytes a compressor made. */
export function compressedLength(c: Compressed): number {
  if (Buffer.isBuffer(c)) return c.length;
  let n = 0;
  for (const b of c) n += b.length;
  return n;
}

/** What a compressor made, as one buffer (copied when it came in several). */
export const compressedBytes = (c: Compressed): Buffer => (Buffer.isBuffer(c) ? c : Buffer.concat(c));

export type Compressor = (bytes: Uint8Array, encoding: string, level: number, done: Done) => void;

export interface CachedGzipStats {
  /** Pieces taken from the cache / from the disk store / deflated, since start. */
  hits: number;
  stored: number;
  misses: number;
  /** Deflated bytes held, and how many pieces. */
  heldBytes: number;
  heldPieces: number;
}

export interface CachedGzip {
  compress: Compressor;
  stats(): CachedGzipStats;
}

/**
 * gzip for DesiredStates that keeps the deflated pieces of what it sent. A big message is cut
 * at content-defined points (content-cuts.ts), each piece deflated on its own (a sync flush:
 * byte-aligned, no reference to the piece before) and kept under the SHA-256 of its bytes and
 * the level; the pieces in order, an empty final block, and a header and trailer (CRC-32
 * and length of the whole message) make one ordinary gzip member, as parallelCompress does.
 * They are handed on as those buffers (Compressed), not copied into one.
 *
 * A change of one user of a 100,000-user node changes one piece of each inbound's user list
 * and the length prefixes near the start; every other piece is found, whatever its offset now,
 * and only the changed ones (a few of ~230) are deflated again. Pieces are shared by content:
 * nodes granted the same access group send the same user runs and deflate them once.
 *
 * At most `cacheBytes` of deflated pieces are kept, the least recently used dropped first.
 * Misses are looked for in `store` (pieces kept on disk across restarts: gzip-piece-store.ts),
 * then deflated `concurrency` at a time on libuv's pool (each zlib stream holds a few hundred
 * KiB while it runs) and written to the store. Smaller messages and deflate go to parallelCompress.
 */
export function createCachedGzip(opts: {
  cacheBytes: number;
  concurrency?: number;
  cuts?: CutOptions;
  store?: GzipPieceStore;
}): CachedGzip {
  const crc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  const concurrency = opts.concurrency ?? Math.max(2, availableParallelism());
  const cache = new Map<string, Buffer>();
  let held = 0;
  let hits = 0;
  let stored = 0;
  let misses = 0;

  const take = (key: string): Buffer | undefined => {
    const piece = cache.get(key);
    if (piece) {
      // Most recently used goes last (a Map keeps insertion order).
      cache.delete(key);
      cache.set(key, piece);
    }
    return piece;
  };
  const keep = (key: string, piece: Buffer): void => {
    if (piece.length > opts.cacheBytes || cache.has(key)) return;
    cache.set(key, piece);
    held += piece.length;
    for (const [k, v] of cache) {
      if (held <= opts.cacheBytes) break;
      cache.delete(k);
      held -= v.length;
    }
  };

  const compress: Compressor = (bytes, encoding, level, done) => {
    if (encoding !== 'gzip' || bytes.length < CACHE_FROM_BYTES || !crc32 || opts.cacheBytes <= 0) {
      parallelCompress(bytes, encoding, level, done);
      return;
    }
    const cuts = contentCuts(bytes, opts.cuts ?? DEFAULT_CUTS);
    const out: Buffer[] = new Array(cuts.length);
    const todo: Array<{ k: number; key: string; piece: Uint8Array }> = [];
    let start = 0;
    for (let k = 0; k < cuts.length; k++) {
      const piece = bytes.subarray(start, cuts[k]);
      start = cuts[k] as number;
      const key = `${level}:${createHash('sha256').update(piece).digest('base64')}`;
      const found = take(key);
      if (found) {
        out[k] = found;
        hits++;
      } else todo.push({ k, key, piece });
    }
    const finish = () => {
      const trailer = Buffer.allocUnsafe(8);
      trailer.writeUInt32LE(crc32(bytes) >>> 0, 0);
      trailer.writeUInt32LE(bytes.length >>> 0, 4);
      done(null, [GZIP_HEADER, ...out, FINAL_BLOCK, trailer]);
    };
    if (todo.length === 0) {
      process.nextTick(finish);
      return;
    }
    const deflate = (todo: Array<{ k: number; key: string; piece: Uint8Array }>) => {
      if (todo.length === 0) {
        finish();
        return;
      }
      let next = 0;
      let left = todo.length;
      let failed = false;
      const pump = () => {
        while (next < todo.length && next - (todo.length - left) < concurrency) {
          const { k, key, piece } = todo[next++] as (typeof todo)[number];
          zlib.deflateRaw(
            piece,
            { level, finishFlush: zlib.constants.Z_SYNC_FLUSH, chunkSize: oneChunk(piece.length) },
            (error, deflated) => {
              if (failed) return;
              if (error) {
                failed = true;
                done(error);
                return;
              }
              // zlib may hand back a view of a larger chunk: keep exactly the piece's bytes.
              const own = deflated.byteLength * 2 < deflated.buffer.byteLength ? Buffer.from(deflated) : deflated;
              out[k] = own;
              keep(key, own);
              opts.store?.put(key, own);
              misses++;
              if (--left === 0) finish();
              else pump();
            },
          );
        }
      };
      pump();
    };
    const store = opts.store;
    if (!store) {
      deflate(todo);
      return;
    }
    // What the store holds (a restarted gateway's pieces) first; the rest deflated.
    Promise.all(todo.map((t) => store.get(t.key))).then(
      (found) => {
        const rest: typeof todo = [];
        for (const [i, t] of todo.entries()) {
          const piece = found[i];
          if (piece) {
            out[t.k] = piece;
            keep(t.key, piece);
            stored++;
          } else rest.push(t);
        }
        deflate(rest);
      },
      () => deflate(todo),
    );
  };

  return {
    compress,
    stats: () => ({ hits, stored, misses, heldBytes: held, heldPieces: cache.size }),
  };
}
