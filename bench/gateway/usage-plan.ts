// What the usage benchmark reports, shared by the simulated agents (agents-worker.ts) and the
// in-process baselines (usage.ts), so every path credits exactly the same rows and bytes.

/** Subscription i (0-based) as seeded by usage.ts. */
export const subscriptionId = (i: number) => `sub_${String(i + 1).padStart(26, '0')}`;

/**
 * Node k serves its own users: the subscriptions are split into one partition per node, and
 * report r of node k credits `entries` of its partition, moving round it from report to report
 * (a node reports the users active on it; users of different nodes are different rows, so
 * concurrent reports do not queue on each other's row locks).
 */
export function entryIndex(k: number, r: number, i: number, subscriptions: number, nodes: number, entries: number): number {
  const part = Math.floor(subscriptions / nodes);
  if (entries > part) throw new Error(`a report of ${entries} entries needs at least ${entries} subscriptions per node (have ${part})`);
  return k * part + ((r * entries + i) % part);
}

/** Bytes of entry i of report r: they vary per report and entry, so a report counted twice (or lost) shows in the sums. */
export const uplink = (r: number, i: number) => 1000 + ((r * 7 + i) % 1000);
export const downlink = (r: number, i: number) => 2000 + ((r * 13 + i) % 2000);

/** Report r of node k (of `nodes`) in columns: subscription ids, uplink and downlink deltas, and its total bytes. */
export function reportColumns(
  ids: readonly string[],
  nodes: number,
  k: number,
  r: number,
  entries: number,
): { ids: string[]; up: number[]; down: number[]; bytes: number } {
  const out = { ids: new Array<string>(entries), up: new Array<number>(entries), down: new Array<number>(entries), bytes: 0 };
  for (let i = 0; i < entries; i++) {
    const up = uplink(r, i);
    const down = downlink(r, i);
    out.ids[i] = ids[entryIndex(k, r, i, ids.length, nodes, entries)] as string;
    out.up[i] = up;
    out.down[i] = down;
    out.bytes += up + down;
  }
  return out;
}
