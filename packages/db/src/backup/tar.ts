import type { Readable } from 'node:stream';
import { BackupError } from './errors.ts';

/**
 * The archive's container: POSIX ustar, gzip'd, so `tar -tzf` lists an archive and
 * `tar -xzOf a.tar.gz manifest.json` shows its manifest without svc. Only what backups need:
 * regular files with short names, written and read in order. Nothing from an archive is
 * trusted: headers are checksummed, sizes parsed strictly, names checked by the caller.
 */

const BLOCK = 512;
/** The largest part one ustar header can describe (11 octal digits). */
export const MAX_PART_BYTES = 8 ** 11 - 1;

export class ArchiveFormatError extends BackupError {}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** The 512-byte header of a regular file `name` of `size` bytes. */
export function tarHeader(name: string, size: number, mtime: Date): Buffer {
  if (Buffer.byteLength(name) > 99) throw new ArchiveFormatError(`archive entry name too long: ${name}`);
  if (size > MAX_PART_BYTES) throw new ArchiveFormatError(`archive part ${name} is larger than ${MAX_PART_BYTES} bytes`);
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(0o600, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.floor(mtime.getTime() / 1000), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write('0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/** Zero bytes that round a part of `size` bytes up to whole blocks. */
export function tarPadding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** Two zero blocks end an archive. */
export const TAR_END = Buffer.alloc(BLOCK * 2);

/** Reads exactly the bytes asked for from a stream of chunks. */
class ByteReader {
  private buffered: Buffer[] = [];
  private length = 0;
  private done = false;
  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<void> {
    while (this.length < n && !this.done) {
      let next: IteratorResult<Buffer>;
      try {
        next = await this.source.next();
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        if (code.startsWith('Z_') || code === 'ERR_STREAM_PREMATURE_CLOSE')
          throw new ArchiveFormatError(`the archive is damaged: ${(err as Error).message} (not a complete svc backup)`);
        throw err;
      }
      if (next.done) this.done = true;
      else {
        this.buffered.push(next.value);
        this.length += next.value.length;
      }
    }
  }

  /** Up to `n` bytes (fewer only at the end of the stream). */
  async read(n: number): Promise<Buffer> {
    await this.fill(n);
    const all = Buffer.concat(this.buffered);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.buffered = rest.length ? [rest] : [];
    this.length = rest.length;
    return out;
  }

  /** `n` bytes as they arrive, in chunks of at most `max`. */
  async *chunks(n: number, max = 1 << 20): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      const chunk = await this.read(Math.min(left, max));
      if (chunk.length === 0) throw new ArchiveFormatError('the archive ends in the middle of a part (truncated)');
      left -= chunk.length;
      yield chunk;
    }
  }
}

/** What a tar writer may leave after the first zero block: the second, padded to a 10 KiB record at most. */
const MAX_END = 10 * 1024;

/**
 * The rest of the stream after the end marker's first block, read to its end: only zeros, and
 * not more than a record's padding. Reading to the end makes gunzip check its trailer (CRC and
 * length), so a damaged trailer, or anything appended inside the compressed stream, is refused
 * instead of left unread.
 */
async function readEnd(reader: ByteReader): Promise<void> {
  let seen = 0;
  for (;;) {
    const rest = await reader.read(BLOCK);
    if (rest.length === 0) return;
    seen += rest.length;
    if (seen > MAX_END || !rest.every((b) => b === 0)) throw new ArchiveFormatError('the archive has data after its end marker');
  }
}

function parseOctal(field: Buffer, what: string): number {
  const text = field.toString('ascii').replace(/[\0 ]+$/, '');
  if (!/^[0-7]{1,11}$/.test(text)) throw new ArchiveFormatError(`the archive has a damaged header (${what})`);
  return Number.parseInt(text, 8);
}

export interface TarEntry {
  name: string;
  size: number;
  /** The entry's bytes; must be read to the end before the next entry is asked for. */
  body: AsyncGenerator<Buffer>;
}

/** The regular files of an uncompressed tar stream, in order. */
export async function* readTar(stream: Readable): AsyncGenerator<TarEntry> {
  const reader = new ByteReader(stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>);
  for (;;) {
    const header = await reader.read(BLOCK);
    if (header.length < BLOCK) throw new ArchiveFormatError('the archive is truncated (no end marker)');
    if (header.every((b) => b === 0)) return await readEnd(reader);
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : (header[i] as number);
    if (parseOctal(header.subarray(148, 156), 'checksum') !== sum)
      throw new ArchiveFormatError('the archive has a damaged header (checksum)');
    if (header.toString('ascii', 156, 157) !== '0') throw new ArchiveFormatError('the archive holds something other than regular files');
    const name = header.toString('utf8', 0, 100).replace(/\0.*$/s, '');
    const size = parseOctal(header.subarray(124, 136), 'size');
    let consumed = false;
    const body = async function* () {
      yield* reader.chunks(size);
      await reader.read(tarPadding(size).length);
      consumed = true;
    };
    const entry: TarEntry = { name, size, body: body() };
    yield entry;
    if (!consumed) {
      for await (const _ of entry.body);
      if (!consumed) throw new ArchiveFormatError('an archive entry was left before its end');
    }
  }
}
