/**
 * The exact sum of int8 values given as decimal text (as the driver hands PostgreSQL's int8
 * over), as PostgreSQL's `sum(int8)` prints it: the member cache sums each bucket's member
 * hashes this way when a group is read whole (100,000 of them on a big node), where a BigInt per
 * value cost ~40 ms on a node's first push. Each value is split at 10^9 into two integers, both
 * summed as doubles (exact: a part is below 10^10 and at most FLUSH_EVERY values are summed
 * before the parts are carried into a BigInt).
 */
export class Int8Sum {
  private high = 0;
  private low = 0;
  private added = 0;
  private carried = 0n;

  add(text: string): void {
    const n = text.length;
    let i = 0;
    let negative = false;
    if (text.charCodeAt(0) === 45 /* - */) {
      negative = true;
      i = 1;
    }
    if (i === n || n - i > 19) throw new RangeError(`not an int8: ${JSON.stringify(text)}`);
    const split = n - 9;
    let high = 0;
    let low = 0;
    for (; i < split; i++) high = high * 10 + digit(text, i);
    for (; i < n; i++) low = low * 10 + digit(text, i);
    if (negative) {
      this.high -= high;
      this.low -= low;
    } else {
      this.high += high;
      this.low += low;
    }
    if (++this.added === FLUSH_EVERY) this.carry();
  }

  toString(): string {
    this.carry();
    return this.carried.toString();
  }

  private carry(): void {
    this.carried += BigInt(this.high) * 1_000_000_000n + BigInt(this.low);
    this.high = 0;
    this.low = 0;
    this.added = 0;
  }
}

/** Values summed before carrying: 2^19 × 9,223,372,037 (the largest high part) stays under 2^53. */
const FLUSH_EVERY = 2 ** 19;

function digit(text: string, i: number): number {
  const d = text.charCodeAt(i) - 48;
  if (d < 0 || d > 9) throw new RangeError(`not an int8: ${JSON.stringify(text)}`);
  return d;
}
