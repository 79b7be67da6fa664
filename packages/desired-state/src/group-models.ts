import type { MemberCache } from './member-cache.ts';
import type { ModelSubscription } from './model.ts';
import { lowerBound, SPLICE_UP_TO } from './sorted.ts';

/**
 * The members of one access group as a node's ModelSubscriptions (all granted the same inbound
 * list, `key`), made from the group's rows as read: in chunks, the member cache's buckets. What
 * a push after a one-user change of a 100,000-member group would otherwise redo:
 *
 * - models per chunk, once per inbound list: a kept bucket is the same array from snapshot to
 *   snapshot, so its models come back as they were (the compiler does not change them); in a
 *   bucket read again, a row that did not change is the row object kept, and keeps its model;
 * - the members in id order, kept with the group in the member cache: the next snapshot drops
 *   the models of the buckets that went and merges in those of the buckets that came (a few
 *   hundred), instead of the compiler sorting 100,000 members from scratch. The compiler still
 *   sorts (by email): over members already in order that costs one pass. Only the inbound list
 *   that first found the group keeps an order; another node's (a different list) is handed its
 *   members unsorted, as before.
 */
export function groupModels<Row extends { id: string }>(
  chunks: ReadonlyArray<readonly Row[]>,
  key: string,
  make: (row: Row) => ModelSubscription,
  kept?: { cache: MemberCache<Row>; groupId: string },
  read?: ReadOrder<Row>,
): ModelSubscription[] {
  const previous = kept?.cache.derived(kept.groupId) as InOrder | undefined;
  // A bucket read again hands the rows that did not change as the row objects kept
  // (read-members.ts): their models are the ones made before, found by row in the chunks that went.
  const reused = new Map<Row, ModelSubscription>();
  if (previous?.key === key) {
    const current = new Set<readonly unknown[]>(chunks);
    for (const [chunk, models] of previous.chunks)
      if (!current.has(chunk)) for (const [k, r] of (chunk as readonly Row[]).entries()) reused.set(r, models[k] as ModelSubscription);
  }
  const modelsOf = (chunk: readonly Row[]): readonly ModelSubscription[] => {
    let made = modelsOfChunk.get(chunk);
    if (made?.key !== key) {
      made = { key, models: chunk.map((r) => reused.get(r) ?? make(r)) };
      modelsOfChunk.set(chunk, made);
    }
    return made.models;
  };
  if (!kept || (previous && previous.key !== key)) {
    const out: ModelSubscription[] = [];
    for (const chunk of chunks) for (const m of modelsOf(chunk)) out.push(m);
    return out;
  }
  const now = new Map<readonly unknown[], readonly ModelSubscription[]>();
  for (const chunk of chunks) now.set(chunk, modelsOf(chunk));
  const next: InOrder = { key, chunks: now, models: inOrder(previous, now, read && ((out) => inReadOrder(chunks, now, read, out))) };
  kept.cache.setDerived(kept.groupId, next);
  return next.models;
}

interface InOrder {
  key: string;
  /** The chunks the order was made of, each with its models as used in it. */
  chunks: ReadonlyMap<readonly unknown[], readonly ModelSubscription[]>;
  /** Every model of those chunks, by id. */
  models: ModelSubscription[];
}

const modelsOfChunk = new WeakMap<readonly unknown[], { key: string; models: readonly ModelSubscription[] }>();
const byId = (a: ModelSubscription, b: ModelSubscription) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The order the rows of a group read whole came in, and each row's chunk (its index in
 * `chunks`; each chunk holds its rows in that same order). PostgreSQL returns members about in
 * the order they were inserted, which for time-ordered ids is nearly id order: sorting the
 * models in that order is one pass where sorting them chunk after chunk (256 interleaved runs)
 * cost ~50 ms for 100,000 members on a node's first push.
 */
export interface ReadOrder<Row> {
  rows: readonly Row[];
  chunkIndex(row: Row): number;
}

/** The models of `chunks` in the order their rows were read; false (and `out` unusable) when the rows do not match the chunks. */
function inReadOrder<Row extends { id: string }>(
  chunks: ReadonlyArray<readonly Row[]>,
  now: ReadonlyMap<readonly unknown[], readonly ModelSubscription[]>,
  read: ReadOrder<Row>,
  out: ModelSubscription[],
): boolean {
  const cursor = new Int32Array(chunks.length);
  const models = chunks.map((c) => now.get(c) ?? []);
  for (const r of read.rows) {
    const k = read.chunkIndex(r);
    const m = models[k]?.[cursor[k] as number];
    if (m?.id !== r.id) return false;
    cursor[k] = (cursor[k] as number) + 1;
    out.push(m);
  }
  return models.every((m, k) => m.length === cursor[k]);
}

const idOf = (m: ModelSubscription) => m.id;

/** The models of `now` by id: the previous order with the chunks that went taken out and those that came merged in, or sorted anew when most changed. */
function inOrder(
  previous: InOrder | undefined,
  now: ReadonlyMap<readonly unknown[], readonly ModelSubscription[]>,
  readOrder?: (out: ModelSubscription[]) => boolean,
): ModelSubscription[] {
  const whole = () => {
    const all: ModelSubscription[] = [];
    // In read order when given (nearly sorted already), else chunk after chunk.
    if (readOrder?.(all)) return all.sort(byId);
    all.length = 0;
    for (const models of now.values()) for (const m of models) all.push(m);
    return all.sort(byId);
  };
  if (!previous) return whole();
  const gone = new Set<ModelSubscription>();
  for (const [chunk, models] of previous.chunks) if (now.get(chunk) !== models) for (const m of models) gone.add(m);
  const came: ModelSubscription[] = [];
  for (const [chunk, models] of now) if (previous.chunks.get(chunk) !== models) for (const m of models) came.push(m);
  if (gone.size === 0 && came.length === 0) return previous.models;
  if (came.length > previous.models.length / 8) return whole();
  // A bucket read again hands most of its models again (the rows that did not change): only
  // what truly went and came moves. A few of them are spliced in place (binary search by id).
  const cameSet = new Set(came);
  const went: ModelSubscription[] = [];
  for (const m of gone) if (!cameSet.has(m)) went.push(m);
  const arrived = came.filter((m) => !gone.has(m));
  if (went.length === 0 && arrived.length === 0) return previous.models;
  if (went.length + arrived.length <= SPLICE_UP_TO) {
    const out = previous.models.slice();
    for (const m of went) {
      const at = lowerBound(out, m.id, idOf);
      if (out[at] !== m) return whole();
      out.splice(at, 1);
    }
    for (const m of arrived) out.splice(lowerBound(out, m.id, idOf), 0, m);
    deltas.set(out, { base: previous.models, went, came: arrived });
    return out;
  }
  came.sort(byId);
  const out: ModelSubscription[] = [];
  let k = 0;
  for (const m of previous.models) {
    if (gone.has(m)) continue;
    while (k < came.length && byId(came[k] as ModelSubscription, m) < 0) out.push(came[k++] as ModelSubscription);
    out.push(m);
  }
  while (k < came.length) out.push(came[k++] as ModelSubscription);
  deltas.set(out, { base: previous.models, went, came: arrived });
  return out;
}

/**
 * How a group's models in order differ from the order before them, when inOrder made them from
 * it: the models that went and those that came (each model in `base` and not in `went` is in the
 * new order, the same object). What the compiler derives from the order before is brought up to
 * date from this (serving-members.ts) instead of being derived again from 100,000 members.
 */
export interface ModelsDelta {
  base: readonly ModelSubscription[];
  went: readonly ModelSubscription[];
  came: readonly ModelSubscription[];
}

const deltas = new WeakMap<readonly ModelSubscription[], ModelsDelta>();

/** How `models` differ from the models they were made from (inOrder), when they were made so. */
export const deltaOf = (models: readonly ModelSubscription[]): ModelsDelta | undefined => deltas.get(models);
