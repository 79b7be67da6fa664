import type { Db } from '@svc/db';
import { halfUsedSliceSql } from '@svc/domain';
import { sql } from 'kysely';
import type { ModelSlice } from './model.ts';
import { higherId, type SliceCache } from './slice-cache.ts';

/** A node's traffic slices as a snapshot holds them. */
export interface NodeSlices {
  /** By subscription id. */
  slices: ReadonlyMap<string, ModelSlice>;
  /** Subscriptions whose slice is half used (halfUsedSliceSql): a successor may be due. */
  halfUsed: ReadonlySet<string>;
}

const NONE: NodeSlices = { slices: new Map(), halfUsed: new Set() };

/**
 * The traffic slices of these nodes, in the snapshot's transaction. Without a cache, one
 * statement. With one (slice-cache.ts): kept nodes get their count and highest id compared,
 * and only the slices above the kept highest id read; the others are read whole, and the big
 * ones among them kept.
 */
export async function readSlices(trx: Db, nodeIds: readonly string[], cache: SliceCache | undefined): Promise<Map<string, NodeSlices>> {
  const out = new Map<string, NodeSlices>();
  if (nodeIds.length === 0) return out;
  const whole: string[] = [];
  const kept = new Map<string, NonNullable<ReturnType<SliceCache['take']>>>();
  for (const id of nodeIds) {
    const k = cache?.take(id);
    if (k) kept.set(id, k);
    else whole.push(id);
  }

  if (cache && kept.size) {
    const { rows: digests } = await sql<{ node_id: string; count: string; top: string; half: string[] }>`
      select t.node_id, count(*)::text as count, max(t.slice_id)::text as top,
             coalesce(array_agg(t.subscription_id) filter (where ${halfUsedSliceSql('t')}), '{}') as half
        from traffic_slices t
       where t.node_id = any(${[...kept.keys()]}::text[])
       group by t.node_id`.execute(trx);
    const digestOf = new Map(digests.map((d) => [d.node_id, d]));
    const above: string[] = [];
    for (const [id, k] of kept) {
      const d = digestOf.get(id);
      if (!d) {
        // No slices any more.
        out.set(id, NONE);
        cache.drop(id);
      } else if (Number(d.count) === k.count && d.top === k.top) {
        out.set(id, { slices: k.slices, halfUsed: new Set(d.half) });
        cache.stats.kept++;
      } else if (higherId(d.top, k.top) !== k.top) above.push(id);
      // The same or a lower highest id with another count: slices went away. Read whole.
      else whole.push(id);
    }
    if (above.length) {
      const { rows } = await sql<{ node_id: string; subscription_id: string; slice_id: string; slice_bytes: string }>`
        select t.node_id, t.subscription_id, t.slice_id::text as slice_id, t.slice_bytes::text as slice_bytes
          from traffic_slices t
          join unnest(${above}::text[], ${above.map((id) => kept.get(id)?.top ?? '0')}::int8[]) as k(node_id, top)
            on t.node_id = k.node_id and t.slice_id > k.top`.execute(trx);
      const fresh = new Map<string, Map<string, ModelSlice>>();
      for (const id of above) fresh.set(id, new Map(kept.get(id)?.slices));
      for (const r of rows) fresh.get(r.node_id)?.set(r.subscription_id, { slice_id: r.slice_id, slice_bytes: r.slice_bytes });
      for (const [id, slices] of fresh) {
        const d = digestOf.get(id) as (typeof digests)[number];
        // Every row of this snapshot is in the merge; more in it means some went away.
        if (slices.size !== Number(d.count)) {
          whole.push(id);
          continue;
        }
        out.set(id, { slices, halfUsed: new Set(d.half) });
        cache.keep(id, { count: slices.size, top: d.top, slices });
        cache.stats.merged++;
      }
    }
  }

  if (whole.length) {
    const { rows } = await sql<{ node_id: string; subscription_id: string; slice_id: string; slice_bytes: string; half: boolean }>`
      select t.node_id, t.subscription_id, t.slice_id::text as slice_id, t.slice_bytes::text as slice_bytes,
             ${halfUsedSliceSql('t')} as half
        from traffic_slices t
       where t.node_id = any(${whole}::text[])`.execute(trx);
    const read = new Map<string, { slices: Map<string, ModelSlice>; halfUsed: Set<string>; top: string }>();
    for (const r of rows) {
      let n = read.get(r.node_id);
      if (!n) {
        n = { slices: new Map(), halfUsed: new Set(), top: '0' };
        read.set(r.node_id, n);
      }
      n.slices.set(r.subscription_id, { slice_id: r.slice_id, slice_bytes: r.slice_bytes });
      if (r.half) n.halfUsed.add(r.subscription_id);
      n.top = higherId(n.top, r.slice_id);
    }
    for (const id of whole) {
      const n = read.get(id);
      out.set(id, n ? { slices: n.slices, halfUsed: n.halfUsed } : NONE);
      if (!cache) continue;
      cache.stats.readWhole++;
      if (n) cache.keep(id, { count: n.slices.size, top: n.top, slices: n.slices });
      else cache.drop(id);
    }
  }
  return out;
}
