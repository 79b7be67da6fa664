import { availableParallelism } from 'node:os';
import * as zlib from 'node:zlib';
import type { Compressed } from './cached-gzip.ts';

/** Below this, one zlib call (a thread) is as fast as splitting. */
const SPLIT_FROM_BYTES = 1024 * 1024;
/** Smallest piece worth its own thread (each piece loses the history of the one before). */
const MIN_PIECE_BYTES = 512 * 1024;

const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]);

type Done = (error: Error | null, compressed?: Compressed) => void;

/**
 * zlib's output chunk for deflating `n` bytes in one go: large enough for the whole deflated
 * piece (deflate's bound: a stored block's 5 bytes per 16 KiB and a little more), so the
 * thread pool hands back one chunk instead of one per 16 KiB (zlib's default), each a round
 * trip through the event loop: ~360 of them for a 14.5 MiB message.
 */
export const oneChunk = (n: number): number => Math.max(16 * 1024, n + (n >> 10) + 1024);

/**
 * gzip on several threads at once, the way pigz does it: the input is cut into pieces, each
 * piece is deflated on its own libuv thread and ended with a sync flush (an empty stored
 * block, byte-aligned) except the last, which ends the stream; the raw deflate pieces
 * concatenated are one valid deflate stream, wrapped in one gzip header and a trailer with the
 * CRC-32 and length of the whole input. The result is a single ordinary gzip member that any
 * decoder reads. A 14.5 MiB DesiredState takes about 1/threads of the time of zlib.gzip.
 *
 * `threads` defaults to the machine's parallelism (and libuv's pool has 4 threads unless
 * UV_THREADPOOL_SIZE says otherwise). Deflate (zlib format) and small inputs go through one
 * zlib call.
 */
export function parallelCompress(bytes: Uint8Array, encoding: string, level: number, done: Done, threads = availableParallelism()): void {
  const crc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  if (encoding !== 'gzip') {
    zlib.deflate(bytes, { level }, done);
    return;
  }
  const pieces = Math.min(threads, Math.floor(bytes.length / MIN_PIECE_BYTES));
  if (bytes.length < SPLIT_FROM_BYTES || pieces < 2 || !crc32) {
    zlib.gzip(bytes, { level }, done);
    return;
  }
  const size = Math.ceil(bytes.length / pieces);
  const out: Buffer[] = new Array(pieces);
  let left = pieces;
  let failed = false;
  for (let k = 0; k < pieces; k++) {
    const last = k === pieces - 1;
    const piece = bytes.subarray(k * size, last ? bytes.length : (k + 1) * size);
    const finishFlush = last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH;
    zlib.deflateRaw(piece, { level, finishFlush, chunkSize: oneChunk(piece.length) }, (error, deflated) => {
      if (failed) return;
      if (error) {
        failed = true;
        done(error);
        return;
      }
      out[k] = deflated;
      if (--left > 0) return;
      const trailer = Buffer.allocUnsafe(8);
      trailer.writeUInt32LE(crc32(bytes) >>> 0, 0);
      trailer.writeUInt32LE(bytes.length >>> 0, 4);
      // Handed on as the pieces (the grpc-js patch writes them in order: cached-gzip.ts Compressed).
      done(null, [GZIP_HEADER, ...out, trailer]);
    });
  }
}
