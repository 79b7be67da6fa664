/**
 * Entries by key, bounded by the rows they hold together (each entry says how many): the least
 * recently used go first once the total passes `maxRows`. What the member cache and the slice
 * cache keep between snapshots.
 */
export class RowsLru<V> {
  private readonly entries = new Map<string, { value: V; rows: number }>();
  private held = 0;

  constructor(private readonly maxRows: number) {}

  /** The entry, marked recently used; undefined when none. */
  use(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  /** The entry, as it is (not marked used). */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Puts an entry of `rows` rows (replacing the key's), then drops the least recently used beyond maxRows. */
  set(key: string, value: V, rows: number): void {
    this.delete(key);
    this.entries.set(key, { value, rows });
    this.held += rows;
    for (const [k, e] of this.entries) {
      if (this.held <= this.maxRows) break;
      this.entries.delete(k);
      this.held -= e.rows;
    }
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.held -= e.rows;
  }

  get heldRows(): number {
    return this.held;
  }
}
