import { BinaryWriter } from '@bufbuild/protobuf/wire';

/**
 * A drop-in BinaryWriter for the generated `encode(message, writer)` functions that writes
 * into one growing buffer.
 *
 * @bufbuild/protobuf's writer collects bytes in a `number[]` and, at every `fork()`/`join()`,
 * copies the nested message's bytes into a new chunk. A DesiredState nests users six levels
 * deep (ServerMessage > DesiredState > NodeConfig > XrayConfig > Inbound > InboundUser), so a
 * 100,000-user snapshot took ~1.2 s to encode against ~0.13 s for JSON.stringify of the same
 * object (bench/BENCHMARKS.md). Here `fork()` reserves one byte for the length and `join()`
 * writes it in place, moving the message's bytes along (one native memmove) only when the
 * length needs more than one byte. The output is byte-identical to BinaryWriter's (canonical
 * varints; src/flat-writer.test.ts and the desired-state golden tests check it).
 */
export class FlatWriter extends BinaryWriter {
  private out: Buffer;
  private pos = 0;
  private readonly forks: number[] = [];

  constructor(initialBytes = 4096) {
    super();
    this.out = Buffer.allocUnsafe(initialBytes);
  }

  override finish(): Uint8Array<ArrayBuffer> {
    if (this.forks.length) throw new Error('invalid state, fork not joined');
    const n = this.pos;
    this.pos = 0;
    if (n >= HAND_OVER_FROM) {
      // A big message is handed over in the buffer it was written in (at most twice its size),
      // not copied into a fresh one: copying 14.5 MiB into new pages cost ~20-50 ms here. The
      // writer starts a new buffer if it is used again.
      const out = this.out.subarray(0, n);
      this.out = Buffer.allocUnsafe(4096);
      return out as Uint8Array<ArrayBuffer>;
    }
    const out = new Uint8Array(n);
    out.set(this.out.subarray(0, n));
    return out;
  }

  override fork(): this {
    this.ensure(1);
    this.forks.push(this.pos);
    this.pos += 1;
    return this;
  }

  override join(): this {
    const start = this.forks.pop();
    if (start === undefined) throw new Error('invalid state, fork stack empty');
    const len = this.pos - start - 1;
    const size = varintSize(len);
    if (size > 1) {
      this.ensure(size - 1);
      this.out.copyWithin(start + size, start + 1, this.pos);
      this.pos += size - 1;
    }
    writeVarint32(this.out, start, len);
    return this;
  }

  override tag(fieldNo: number, type: number): this {
    return this.uint32(((fieldNo << 3) | type) >>> 0);
  }

  override raw(chunk: Uint8Array): this {
    this.ensure(chunk.byteLength);
    this.out.set(chunk, this.pos);
    this.pos += chunk.byteLength;
    return this;
  }

  override uint32(value: number): this {
    assertUInt32(value);
    this.ensure(5);
    this.pos = writeVarint32(this.out, this.pos, value);
    return this;
  }

  override int32(value: number): this {
    assertInt32(value);
    if (value >= 0) return this.uint32(value);
    // Negative int32 is sign-extended to ten bytes, as BinaryWriter (and the spec) write it.
    return this.via((w) => w.int32(value));
  }

  override sint32(value: number): this {
    assertInt32(value);
    return this.uint32(((value << 1) ^ (value >> 31)) >>> 0);
  }

  override bool(value: boolean): this {
    this.ensure(1);
    this.out[this.pos++] = value ? 1 : 0;
    return this;
  }

  override bytes(value: Uint8Array): this {
    this.uint32(value.byteLength);
    return this.raw(value);
  }

  override string(value: string): this {
    const n = value.length;
    if (n < 43) {
      // At most 3 bytes per UTF-16 unit: the length fits one byte. ASCII is copied here;
      // anything else goes through Buffer's UTF-8 encoder (lone surrogates become U+FFFD,
      // as with TextEncoder).
      this.ensure(1 + 3 * n);
      const bytes = this.out;
      const at = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c > 0x7f) break;
        bytes[at + i] = c;
      }
      const len = i === n ? n : i + bytes.write(value.slice(i), at + i, 'utf8');
      bytes[this.pos] = len;
      this.pos = at + len;
      return this;
    }
    const len = Buffer.byteLength(value, 'utf8');
    this.uint32(len);
    this.ensure(len);
    this.pos += this.out.write(value, this.pos, len, 'utf8');
    return this;
  }

  override float(value: number): this {
    assertFloat32(value);
    this.ensure(4);
    this.pos = this.out.writeFloatLE(value, this.pos);
    return this;
  }

  override double(value: number): this {
    this.ensure(8);
    this.pos = this.out.writeDoubleLE(value, this.pos);
    return this;
  }

  override fixed32(value: number): this {
    assertUInt32(value);
    this.ensure(4);
    this.pos = this.out.writeUInt32LE(value, this.pos);
    return this;
  }

  override sfixed32(value: number): this {
    assertInt32(value);
    this.ensure(4);
    this.pos = this.out.writeInt32LE(value, this.pos);
    return this;
  }

  // 64-bit values: every user of a node with limits carries five (UserLimits: speeds, expiry,
  // slice), so non-negative values up to 2^53 are written here; anything else (negative, beyond
  // 2^53, a string) goes through BinaryWriter, which defines the bytes and the errors. A
  // BinaryWriter a value cost ~0.3 µs and its garbage: ~0.15 s of a 100,000-user DesiredState.
  override int64(value: string | number | bigint): this {
    const v = safeUnsigned(value);
    return v === undefined ? this.via((w) => w.int64(value)) : this.varint53(v);
  }

  override uint64(value: string | number | bigint): this {
    const v = safeUnsigned(value);
    return v === undefined ? this.via((w) => w.uint64(value)) : this.varint53(v);
  }

  override sint64(value: string | number | bigint): this {
    const v = safeUnsigned(value);
    // Zig-zag of a non-negative value is twice it; still exact below 2^53 for v < 2^52.
    return v === undefined || v >= 2 ** 52 ? this.via((w) => w.sint64(value)) : this.varint53(v * 2);
  }

  override fixed64(value: string | number | bigint): this {
    return this.via((w) => w.fixed64(value));
  }

  override sfixed64(value: string | number | bigint): this {
    return this.via((w) => w.sfixed64(value));
  }

  /** A varint of an integer 0 ≤ v < 2^53 (at most 8 bytes). */
  private varint53(value: number): this {
    if (value <= 0xffffffff) {
      this.ensure(5);
      this.pos = writeVarint32(this.out, this.pos, value);
      return this;
    }
    this.ensure(8);
    let v = value;
    let pos = this.pos;
    while (v > 0x7f) {
      this.out[pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.out[pos++] = v;
    this.pos = pos;
    return this;
  }

  private via(write: (w: BinaryWriter) => void): this {
    const w = new BinaryWriter();
    write(w);
    return this.raw(w.finish());
  }

  private ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.out.length) return;
    let size = this.out.length * 2;
    while (size < need) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.out.copy(grown, 0, 0, this.pos);
    this.out = grown;
  }
}

/** What the generated message codecs have in common, as far as encoding goes. */
export interface Encodes<T> {
  encode(message: T, writer?: BinaryWriter): BinaryWriter;
}

/** Encodes a message with the generated code over a FlatWriter. */
export function encodeFlat<T>(codec: Encodes<T>, message: T): Uint8Array {
  return codec.encode(message, new FlatWriter()).finish();
}

/** A 64-bit value as a number when it is an integer 0 ≤ v < 2^53; undefined otherwise. */
function safeUnsigned(value: string | number | bigint): number | undefined {
  if (typeof value === 'bigint') return value >= 0n && value <= MAX_SAFE ? Number(value) : undefined;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  return undefined;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** From this size finish() hands its buffer over instead of copying the message out of it. */
const HAND_OVER_FROM = 64 * 1024;

function varintSize(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}

function writeVarint32(bytes: Buffer, at: number, value: number): number {
  let v = value >>> 0;
  let pos = at;
  while (v > 0x7f) {
    bytes[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  bytes[pos++] = v;
  return pos;
}

function assertUInt32(value: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0xffffffff)
    throw new Error(`invalid uint32: ${String(value)}`);
}

function assertInt32(value: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff)
    throw new Error(`invalid int32: ${String(value)}`);
}

function assertFloat32(value: number): void {
  if (typeof value !== 'number') throw new Error(`invalid float32: ${String(value)}`);
  if (Number.isFinite(value) && (value > 3.4028234663852886e38 || value < -3.4028234663852886e38))
    throw new Error(`invalid float32: ${String(value)}`);
}
