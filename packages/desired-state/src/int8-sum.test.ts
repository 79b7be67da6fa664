import { describe, expect, it } from 'vitest';
import { Int8Sum } from './int8-sum.ts';

const MIN = -(2n ** 63n);
const MAX = 2n ** 63n - 1n;

function sumOf(values: readonly bigint[]): string {
  const s = new Int8Sum();
  for (const v of values) s.add(v.toString());
  return s.toString();
}

/** A deterministic spread of int8 values over the whole range (xorshift64). */
function int8s(count: number, seed: bigint): bigint[] {
  let x = seed;
  const out: bigint[] = [];
  for (let i = 0; i < count; i++) {
    x ^= (x << 13n) & 0xffffffffffffffffn;
    x ^= x >> 7n;
    x ^= (x << 17n) & 0xffffffffffffffffn;
    out.push(BigInt.asIntN(64, x));
  }
  return out;
}

describe('Int8Sum: the member cache digest sums int8 text exactly, as PostgreSQL sum(int8) prints it', () => {
  it('sums the extremes, zero, short and negative values exactly', () => {
    const values = [MIN, MAX, 0n, -1n, 1n, 999_999_999n, 1_000_000_000n, -1_000_000_000n, -999_999_999n, 5n, -5n, MIN, MIN, MAX];
    expect(sumOf(values)).toBe(values.reduce((a, b) => a + b, 0n).toString());
    expect(sumOf([])).toBe('0');
  });

  it('equals a BigInt sum over 100,000 values spread over the whole range', () => {
    const values = int8s(100_000, 0x9e3779b97f4a7c15n);
    expect(sumOf(values)).toBe(values.reduce((a, b) => a + b, 0n).toString());
  });

  it('stays exact past the point where it carries into a BigInt (a million values of the largest magnitude)', () => {
    const s = new Int8Sum();
    for (let i = 0; i < 1_000_000; i++) s.add(i % 2 === 0 ? MAX.toString() : MIN.toString());
    expect(s.toString()).toBe((500_000n * MAX + 500_000n * MIN).toString());
    const t = new Int8Sum();
    for (let i = 0; i < 1_000_000; i++) t.add(MAX.toString());
    expect(t.toString()).toBe((1_000_000n * MAX).toString());
  });

  it('refuses what is not an int8 instead of summing it wrongly', () => {
    for (const bad of ['', '-', '12a', ' 1', '1.5', '99999999999999999999', '+1']) expect(() => new Int8Sum().add(bad)).toThrow(RangeError);
  });
});
