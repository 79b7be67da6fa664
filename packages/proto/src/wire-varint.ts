/** The protobuf wire format is broken where a message was walked by hand (splice-repeated.ts, server-message-decoder.ts). */
export class WireFormatError extends Error {}

/**
 * Reads base-128 varints of up to 8 bytes (below 2^56: every tag and length we meet) from a
 * message walked by hand; `next` is where the last one ended (a field, not a tuple per varint:
 * a big DesiredState has ~600,000 of them).
 */
export class VarintReader {
  next = 0;

  constructor(private readonly buf: Uint8Array) {}

  read(pos: number, end: number): number {
    const buf = this.buf;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (pos >= end) throw new WireFormatError('varint past the end of the message');
      const b = buf[pos++] as number;
      value += (b & 0x7f) * scale;
      if (b < 0x80) {
        this.next = pos;
        return value;
      }
      scale *= 128;
    }
    throw new WireFormatError('varint too long');
  }
}

/** A non-negative integer as a base-128 varint. */
export function encodeVarint(value: number): Uint8Array {
  const bytes: number[] = [];
  let v = value;
  while (v >= 0x80) {
    bytes.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Uint8Array.from(bytes);
}
