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
}

/** What the generated message codecs have in common, as far as decoding goes. */
export interface Decodes<T> {
  decode(input: BinaryReader | Uint8Array, length?: number): T;
}

/** Decodes a message with the generated code over a FlatReader. */
export function decodeFlat<T>(codec: Decodes<T>, bytes: Uint8Array): T {
  return codec.decode(new FlatReader(bytes));
}
