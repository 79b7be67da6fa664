import { RowsLru } from './rows-lru.ts';

/**
 * The members of big access groups, kept between snapshots in buckets (by a hash of the
 * subscription id, 256 of them), each bucket with the digest PostgreSQL computed for it in the
 * same snapshot its rows were read in. A later snapshot asks PostgreSQL for the digests only
 * (one aggregate over the group: no rows sent, none parsed) and reads again just the buckets
 * whose digest moved. A one-user change of a 100,000-member group reads ~400 rows instead of
 * 100,000 (bench/BENCHMARKS.md, desired state big-node).
 *
 * Why this stays a consistent snapshot: the digests and the re-read buckets come from the same
 * REPEATABLE READ transaction as the rest of the model, and a kept bucket is used only when its
 * digest, taken in its own earlier snapshot, equals the digest in this one: its rows are the
 * rows this snapshot would read. The digest covers every column the compiler reads (the
 * counters are not among them: a limit reached is in the stored status, which filters the rows).
 *
 * Groups under `minGroupRows` members are read whole each time (the digest pass would cost more
 * than it saves). At most `maxRows` members are kept, the least recently used groups dropped.
 */
export interface BucketDigest {
  count: number;
  /** sum of a 64-bit hash of each member's columns, as PostgreSQL's numeric text. */
  sum: string;
}

export interface KeptBucket<Row> extends BucketDigest {
  rows: readonly Row[];
}

interface KeptGroup<Row> {
  /** Which credential columns were read (the nodes' protocols): a different set is another read. */
  shape: string;
  buckets: Map<number, KeptBucket<Row>>;
  /** What a reader derived from the group's rows (it checks it still fits them), carried from one keep to the next. */
  derived: unknown;
}

export interface MemberCacheOptions {
  /** Members kept across all groups (~350 bytes each). */
  maxRows: number;
  /** Groups with fewer members are not kept. */
  minGroupRows: number;
}

export const DEFAULT_MEMBER_CACHE: MemberCacheOptions = { maxRows: 300_000, minGroupRows: 2_000 };

export class MemberCache<Row = unknown> {
  private readonly groups: RowsLru<KeptGroup<Row>>;
  /** Snapshots that used kept buckets / buckets read again / groups read whole, since start. */
  readonly stats = { bucketsKept: 0, bucketsRead: 0, groupsReadWhole: 0 };

  constructor(readonly options: MemberCacheOptions = DEFAULT_MEMBER_CACHE) {
    this.groups = new RowsLru(options.maxRows);
  }

  /** The kept buckets of a group read with this shape, marked recently used; undefined when none. */
  take(groupId: string, shape: string): Map<number, KeptBucket<Row>> | undefined {
    const g = this.groups.peek(groupId);
    if (!g || g.shape !== shape) return undefined;
    this.groups.use(groupId);
    return g.buckets;
  }

  /** Keeps a group's buckets (replacing what was kept for it), if it is big enough; drops the least recently used beyond maxRows. */
  keep(groupId: string, shape: string, buckets: Map<number, KeptBucket<Row>>): void {
    let rows = 0;
    for (const b of buckets.values()) rows += b.rows.length;
    const derived = this.groups.peek(groupId)?.derived;
    this.groups.delete(groupId);
    if (rows < this.options.minGroupRows || rows > this.options.maxRows) return;
    this.groups.set(groupId, { shape, buckets, derived }, rows);
  }

  /** Whether the group's members are kept (with any shape). */
  holds(groupId: string): boolean {
    return this.groups.has(groupId);
  }

  /** What was derived from a kept group's rows (see setDerived); undefined when none or not kept. */
  derived(groupId: string): unknown {
    return this.groups.peek(groupId)?.derived;
  }

  /**
   * Keeps something derived from a kept group's rows with it, until the group is dropped. The
   * reader must check it still fits the rows (by the identity of the buckets' row arrays, which
   * are the same arrays while their bucket is unchanged).
   */
  setDerived(groupId: string, value: unknown): void {
    const g = this.groups.peek(groupId);
    if (g) g.derived = value;
  }

  get heldRows(): number {
    return this.groups.heldRows;
  }
}
