import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lowercase

let lastMs = 0;
let lastRand: Uint8Array = new Uint8Array(10);

/**
 * Time-sortable, prefixed identifier (`adm_01jd...`): 48-bit milliseconds + 80 random bits,
 * base32 (26 chars). Within one millisecond of one process ids still increase (the random
 * part is incremented), so sorting by id is insertion order per process, and cursor
 * pagination by id is stable.
 */
export function newId(prefix: string, nowMs: number = Date.now()): string {
  let rand: Uint8Array;
  if (nowMs <= lastMs) {
    nowMs = lastMs;
    rand = increment(lastRand);
  } else {
    rand = randomBytes(10);
  }
  lastMs = nowMs;
  lastRand = rand;
  return `${prefix}_${encodeTime(nowMs)}${encodeRandom(rand)}`;
}

function increment(bytes: Uint8Array): Uint8Array {
  const out = Uint8Array.from(bytes);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] === 255) out[i] = 0;
    else {
      out[i] = (out[i] as number) + 1;
      break;
    }
  }
  return out;
}

function encodeTime(ms: number): string {
  let s = '';
  for (let i = 0; i < 10; i++) {
    s = ALPHABET[ms % 32] + s;
    ms = Math.floor(ms / 32);
  }
  return s;
}

function encodeRandom(bytes: Uint8Array): string {
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let s = '';
  for (let i = 0; i < 16; i++) {
    s = ALPHABET[Number(bits & 31n)] + s;
    bits >>= 5n;
  }
  return s;
}
