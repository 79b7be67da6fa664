/**
 * Content-defined cut points (a gear hash, as FastCDC and restic use): a cut falls where the
 * hash of the last 32 bytes has its top bits zero, so where a piece ends depends on the bytes
 * around it and not on its offset. A change inside one piece (a user removed from a
 * DesiredState, a length prefix grown by a byte) moves no cut after the next one: the pieces
 * after it are byte-identical to the same pieces of the previous message, wherever they now
 * sit. Pieces are at least `min` and at most `max` bytes (a cut forced at `max` in data that
 * never matches); a mask of b bits adds about 2^b bytes to `min` on average.
 *
 * Only the bytes after `min` are hashed (and the 32 before), so a long `min` and a short mask
 * cost less for the same mean piece: 64 KiB + a 14-bit mask (mean ~80 KiB) hashes a fifth of
 * the message, 7 ms for 19 MiB here, where 16 KiB + 16 bits (the same mean, until 2026-12-01)
 * hashed four fifths in 27 ms (66 ms a push in the gateway's profile of a 100,000-user node).
 */
export interface CutOptions {
  min: number;
  max: number;
  /** Bits of the hash that must be zero (high bits: they depend on the most bytes). */
  mask: number;
}

export const DEFAULT_CUTS: CutOptions = { min: 64 * 1024, max: 256 * 1024, mask: 0xfffc0000 | 0 };

/** 256 fixed pseudo-random 32-bit values (a splitmix32 sequence): the cuts are the same in every process. */
const GEAR = (() => {
  const t = new Int32Array(256);
  let s = 0x9e3779b9 | 0;
  for (let i = 0; i < 256; i++) {
    s = (s + 0x9e3779b9) | 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    t[i] = z ^ (z >>> 16);
  }
  return t;
})();

/** The end offsets of the pieces of `bytes` (the last is bytes.length; none for empty input). */
export function contentCuts(bytes: Uint8Array, o: CutOptions = DEFAULT_CUTS): number[] {
  const cuts: number[] = [];
  const n = bytes.length;
  let start = 0;
  while (start < n) {
    const limit = Math.min(n, start + o.max);
    // The hash needs the 32 bytes before a candidate cut; start it there, skip the rest of `min`.
    let i = Math.min(limit, start + o.min) - 32;
    if (i < start) i = start;
    let h = 0;
    let cut = limit;
    for (; i < limit; i++) {
      h = ((h << 1) + (GEAR[bytes[i] as number] as number)) | 0;
      if ((h & o.mask) === 0 && i + 1 - start >= o.min) {
        cut = i + 1;
        break;
      }
    }
    cuts.push(cut);
    start = cut;
  }
  return cuts;
}
