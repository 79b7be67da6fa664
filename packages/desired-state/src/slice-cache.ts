import type { ModelSlice } from './model.ts';
import { RowsLru } from './rows-lru.ts';

/**
 * The traffic slices of big nodes (issue 36), kept between snapshots with the count and the
 * highest slice id they were read with. A later snapshot asks PostgreSQL for each kept node's
 * count and highest slice id (one aggregate, no rows sent) and reads only the slices above the
 * kept highest id; a 100,000-user node's snapshot otherwise reads and parses 100,000 slice rows
 * (~150-300 ms; bench/BENCHMARKS.md, big node).
 *
 * Why what is used is what the snapshot holds (packages/domain/src/limits/traffic-slices.ts):
 * a node's slice ids become visible in increasing order, a slice's id and size change only
 * together with a new, higher id, and rows only go away with their node or subscription. So the
 * rows of this snapshot with an id up to the kept highest are exactly the kept ones with those
 * ids, the rows above it are read, and the kept ones that are gone show as a count the merge
 * does not reach: then the node is read whole.
 *
 * Nodes under `minNodeRows` slices are read whole each time. At most `maxRows` slices are kept,
 * the least recently used nodes dropped.
 */
export interface KeptSlices {
  count: number;
  /** The highest slice_id among them (int8 as text). */
  top: string;
  slices: ReadonlyMap<string, ModelSlice>;
}

export interface SliceCacheOptions {
  /** Slices kept across all nodes (~150 bytes each). */
  maxRows: number;
  /** Nodes with fewer slices are not kept. */
  minNodeRows: number;
}

export const DEFAULT_SLICE_CACHE: SliceCacheOptions = { maxRows: 300_000, minNodeRows: 2_000 };

export class SliceCache {
  private readonly nodes: RowsLru<KeptSlices>;
  /** Nodes whose slices were used as kept / merged with the slices above the kept top / read whole, since start. */
  readonly stats = { kept: 0, merged: 0, readWhole: 0 };

  constructor(readonly options: SliceCacheOptions = DEFAULT_SLICE_CACHE) {
    this.nodes = new RowsLru(options.maxRows);
  }

  /** A node's kept slices, marked recently used; undefined when none. */
  take(nodeId: string): KeptSlices | undefined {
    return this.nodes.use(nodeId);
  }

  /** Keeps a node's slices (replacing what was kept for it), if it has enough; drops the least recently used beyond maxRows. */
  keep(nodeId: string, kept: KeptSlices): void {
    this.nodes.delete(nodeId);
    if (kept.count < this.options.minNodeRows || kept.count > this.options.maxRows) return;
    this.nodes.set(nodeId, kept, kept.count);
  }

  drop(nodeId: string): void {
    this.nodes.delete(nodeId);
  }

  get heldRows(): number {
    return this.nodes.heldRows;
  }
}

/** The higher of two int8s as text (no sign, no leading zeros: slice ids are positive). */
export const higherId = (a: string, b: string): string => (a.length !== b.length ? (a.length > b.length ? a : b) : a > b ? a : b);
