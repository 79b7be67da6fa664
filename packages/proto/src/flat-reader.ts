import { BinaryReader } from '@bufbuild/protobuf/wire';

type Sliceable = Buffer & { utf8Slice?: (start: number, end: number) => string };
const textDecoder = new TextDecoder();

/**
 * A drop-in BinaryReader for the generated `decode(reader)` functions that cuts strings
 * straight out of the message bytes. BinaryReader makes a subarray per string and hands it to
 * a TextDecoder: a 100,000-user DesiredState has 400,000 strings, and the agent spent ~110 ms
 * decoding it (bench/BENCHMARKS.md, desired state big-node). Here a string is Buffer's
 * utf8Slice of a range (what protobufjs does in Node), ~20% less for the whole message.
 *
 * The text is the same as TextDecoder's: both replace malformed UTF-8 as the WHATWG decoder
 * does; TextDecoder also drops a leading byte order mark, so a string that starts with one
 * goes through it (flat-reader.test.ts compares both on hostile bytes).
 */
export class FlatReader extends BinaryReader {
  private readonly text: Sliceable;

  constructor(bytes: Uint8Array) {
    super(bytes);
    this.text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  override string(): string {
    const len = this.uint32();
    const start = this.pos;
    const end = start + len;
    if (end > this.len) throw new RangeError('premature EOF');
    this.pos = end;
    const t = this.text;
    if (len >= 3 && t[start] === 0xef && t[start + 1] === 0xbb && t[start + 2] === 0xbf) return textDecoder.decode(t.subarray(start, end));
    return t.utf8Slice ? t.utf8Slice(start, end) : t.toString('utf8', start, end);
  }

  // 64-bit integers: BinaryReader reads two 32-bit halves into an array and makes the BigInt
  // through a DataView; a DesiredState carries three per user limit (300,000 for 100,000 users:
  // ~40% of its decode). A varint of at most 7 bytes (below 2^49, every count and id we send)
  // is read here as a number and made a BigInt once; anything longer (a negative int64, a huge
  // value) and every error go through BinaryReader's own code from the same position.
  override int64(): bigint | string {
    return this.smallLong() ?? super.int64();
  }

  override uint64(): bigint | string {
    return this.smallLong() ?? super.uint64();
  }

  private smallLong(): bigint | undefined {
    const buf = this.buf;
    let pos = this.pos;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 7 && pos < this.len; i++) {
      const b = buf[pos++] as number;
      value += (b & 0x7f) * scale;
      if (b < 0x80) {
        this.pos = pos;
        return value === 0 ? ZERO : BigInt(value);
      }
      scale *= 128;
    }
    return undefined;
  }
}

const ZERO = BigInt(0);

/** What the generated message codecs have in common, as far as decoding goes. */
export interface Decodes<T> {
  decode(input: BinaryReader | Uint8Array, length?: number): T;
}

/** Decodes a message with the generated code over a FlatReader. */
export function decodeFlat<T>(codec: Decodes<T>, bytes: Uint8Array): T {
  return codec.decode(new FlatReader(bytes));
}
