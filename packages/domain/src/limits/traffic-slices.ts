import { sql } from 'kysely';
import { saturated } from '../agents/usage-bounds.ts';
import { lockNodesInOrder } from '../fleet/lock-nodes.ts';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';

/**
 * Traffic slices (issue 36; docs/limits.md, "Entitlements"). A node carries a subscription with
 * a traffic limit on a slice of what remains of it: while the control plane is away the agent
 * cuts the user once the node carried slice_bytes since it applied slice_id. So what the fleet
 * can carry beyond the limit during a partition is bounded by the slices outstanding on its
 * nodes (each at most what remained when it was granted).
 *
 * The rule, once (sliceBytes):
 *   remaining_raw = floor((traffic_limit_bytes - used_bytes) / node multiplier)
 *                   (what remains, in the node's raw bytes: it charges raw x multiplier,
 *                    nodes/node-traffic.ts; a node of multiplier 0 charges nothing: no slice)
 *   day_raw       = raw bytes the node carried for the subscription over the last 24 hours
 *   slice_bytes   = min(remaining_raw, max(SLICE_FLOOR_BYTES, day_raw))
 * i.e. the lesser of what remains and a day's expected use (yesterday's, at least 256 MiB so a
 * light user is not re-granted every few megabytes), never more than remains.
 *
 * When: a subscription served by the node with a limit and no slice gets one before the node's
 * desired state is compiled (grantTrafficSlices from @svc/desired-state), so no user with a
 * limit is ever on a node without a slice; the usage ingest counts the node's raw bytes
 * against the slice (chargeTrafficSlicesSql) and grants a new one (the node's next slice_id,
 * nodes.last_slice_id) once half of it is used; a CutoffReport of a slice with traffic
 * left grants a new one (cutoff-ingest.ts). Each grant gives the node a new revision in the same
 * unit of work.
 *
 * A node's slice ids become visible in increasing order: each grant takes its ids from
 * nodes.last_slice_id with the node's row locked until it commits, so a snapshot that sees a
 * slice id sees every lower one of the node. A slice row changes only by a new grant (a higher
 * slice_id, used_bytes 0) or by the charge of its used_bytes, and goes only with its node or its
 * subscription. The desired-state loader keeps big nodes' slices between snapshots on these
 * three facts (packages/desired-state/src/slice-cache.ts).
 */

/** A day's expected use is never taken below this (256 MiB). */
export const SLICE_FLOOR_BYTES = 256 * 2 ** 20;
/** How far back a day's expected use looks. */
export const SLICE_DAY_MS = 86_400_000;

export interface SliceInput {
  traffic_limit_bytes: number;
  /** Charged bytes of the current period (subscriptions.used_bytes). */
  used_bytes: number;
  /** The node's traffic multiplier (charged bytes per raw byte). */
  multiplier: number;
  /** Raw bytes the node carried for the subscription over the last SLICE_DAY_MS. */
  day_raw_bytes: number;
}

/** The slice a node gets (raw bytes), or null when the node charges nothing (multiplier 0: unmetered there). */
export function sliceBytes(x: SliceInput): number | null {
  if (!(x.multiplier > 0)) return null;
  const remainingRaw = Math.floor(Math.max(0, x.traffic_limit_bytes - x.used_bytes) / x.multiplier);
  return Math.min(remainingRaw, Math.max(SLICE_FLOOR_BYTES, x.day_raw_bytes));
}

/**
 * A slice half used: its successor is due (grantTrafficSlices). `t` is the alias of a
 * traffic_slices row. Something of it was used, so a slice of 0 bytes (nothing remained when it
 * was granted) is not re-granted on every read.
 */
export const halfUsedSliceSql = (t: string) =>
  sql<boolean>`(${sql.ref(`${t}.used_bytes`)} > 0 and ${sql.ref(`${t}.used_bytes`)} * 2 >= ${sql.ref(`${t}.slice_bytes`)})`;

/** A member a node serves (a subscription stored active, client active), as a snapshot of the node holds it. */
export interface SliceCandidate {
  id: string;
  traffic_limit_bytes: number | null;
  expires_at: Date | null;
}

/** A node's side of it: its traffic multiplier and its slices (by subscription id), the half-used ones among them (halfUsedSliceSql). */
export interface NodeSliceState {
  multiplier: number;
  slices: ReadonlyMap<string, unknown>;
  halfUsed: ReadonlySet<string>;
}

/**
 * The members a slice may be due for on a node, from what a snapshot of the node holds (no
 * counters): every member grantTrafficSlices would grant one is among them (a traffic limit,
 * not past its expiry, a node that charges, no slice or a half-used one); the grant decides
 * (its own statement adds the counters: a limit already reached gets none). The desired-state
 * compiler grants only when a snapshot shows such a member, instead of asking before each one.
 * One pass over the members, nothing allocated for those that are not due (100,000 of them on
 * a big node, every snapshot).
 */
export function mayBeDueSlices(members: Iterable<SliceCandidate>, node: NodeSliceState, now: Date): string[] {
  const out: string[] = [];
  if (!(node.multiplier > 0)) return out;
  const t = now.getTime();
  for (const m of members) {
    if (m.traffic_limit_bytes === null) continue;
    if (node.slices.has(m.id) && !node.halfUsed.has(m.id)) continue;
    if (m.expires_at !== null && m.expires_at.getTime() <= t) continue;
    out.push(m.id);
  }
  return out;
}

/** A slice as granted: the node may carry slice_bytes (raw) for the subscription under slice_id. */
export interface SliceGrant {
  node_id: string;
  subscription_id: string;
  /** int8 as text (the node's next nodes.last_slice_id). */
  slice_id: string;
  slice_bytes: number;
}

export interface GrantOptions {
  /** Only these subscriptions (the usage ingest's, a cutoff's); default: every one the nodes serve. */
  subscriptions?: readonly string[];
  /** These (node, subscription) get a new slice even if theirs is not half used (a slice cutoff with traffic left). */
  force?: ReadonlyArray<{ node_id: string; subscription_id: string }>;
}

/**
 * Grants slices on these nodes where one is due: a subscription the node serves (stored active,
 * client active, not past its expiry, a traffic limit not reached) with no slice, or whose slice
 * is half used (and something of it was), or that `force` names. Each grant takes a new
 * slice_id; the nodes granted anything get a new revision. Returns the grants.
 */
export async function grantTrafficSlices(
  uow: UnitOfWork,
  nodeIds: readonly string[],
  now: Date,
  options: GrantOptions = {},
): Promise<SliceGrant[]> {
  const ids = [...new Set(nodeIds)];
  if (ids.length === 0) return [];
  const only = options.subscriptions ? [...new Set(options.subscriptions)] : null;
  if (only && only.length === 0) return [];
  const force = options.force ?? [];
  const { rows: due } = await sql<{
    node_id: string;
    subscription_id: string;
    lim: string;
    used: string;
    multiplier: string;
  }>`
    select distinct on (i.node_id, s.id)
           i.node_id, s.id as subscription_id, s.traffic_limit_bytes::text as lim, sc.used_bytes::text as used,
           n.traffic_multiplier::text as multiplier
      from inbounds i
      join nodes n on n.id = i.node_id
      join access_group_inbounds g on g.inbound_id = i.id
      join subscription_access_groups sag on sag.access_group_id = g.access_group_id
      join subscriptions s on s.id = sag.subscription_id
      join subscription_counters sc on sc.subscription_id = s.id
      join clients c on c.id = s.client_id
      left join traffic_slices t on t.node_id = i.node_id and t.subscription_id = s.id
     where i.node_id = any(${ids}::text[])
       ${only ? sql`and s.id = any(${only}::text[])` : sql``}
       and s.status = 'active' and c.status = 'active'
       and s.traffic_limit_bytes is not null and sc.used_bytes < s.traffic_limit_bytes
       and (s.expires_at is null or s.expires_at > ${now})
       and n.traffic_multiplier > 0
       and (t.slice_id is null
            or ${halfUsedSliceSql('t')}
            or (i.node_id, s.id) in (select * from unnest(${force.map((f) => f.node_id)}::text[], ${force.map((f) => f.subscription_id)}::text[])))
     order by i.node_id, s.id`.execute(uow.db);
  if (due.length === 0) return [];
  // Nodes first, in id order (as a revision bump and the usage ingest take them): no deadlock on the slice rows.
  await lockNodesInOrder(uow.db, [...new Set(due.map((d) => d.node_id))].sort());
  const dayFrom = new Date(now.getTime() - SLICE_DAY_MS);
  const { rows: days } = await sql<{ node_id: string; subscription_id: string; raw: string }>`
    select u.node_id, u.subscription_id,
           sum(coalesce(u.raw_uplink_bytes, u.uplink_bytes) + coalesce(u.raw_downlink_bytes, u.downlink_bytes))::text as raw
      from usage_hourly u
      join unnest(${due.map((d) => d.node_id)}::text[], ${due.map((d) => d.subscription_id)}::text[]) as k(node_id, subscription_id)
        on k.node_id = u.node_id and k.subscription_id = u.subscription_id
     where u.hour >= ${dayFrom}
     group by u.node_id, u.subscription_id`.execute(uow.db);
  const dayOf = new Map(days.map((d) => [`${d.node_id} ${d.subscription_id}`, Number(d.raw)]));
  const grants: Array<{ node_id: string; subscription_id: string; bytes: number }> = [];
  for (const d of due) {
    const bytes = sliceBytes({
      traffic_limit_bytes: Number(d.lim),
      used_bytes: Number(d.used),
      multiplier: Number(d.multiplier),
      day_raw_bytes: dayOf.get(`${d.node_id} ${d.subscription_id}`) ?? 0,
    });
    if (bytes !== null) grants.push({ node_id: d.node_id, subscription_id: d.subscription_id, bytes });
  }
  if (grants.length === 0) return [];
  // Slice ids: each grant takes the node's next one (nodes.last_slice_id, its row locked above).
  const perNode = new Map<string, number>();
  for (const g of grants) perNode.set(g.node_id, (perNode.get(g.node_id) ?? 0) + 1);
  const nodes = [...perNode.keys()];
  const { rows: tops } = await sql<{ id: string; base: string }>`
    update nodes n set last_slice_id = n.last_slice_id + k.n
      from unnest(${nodes}::text[], ${nodes.map((n) => perNode.get(n) ?? 0)}::int8[]) as k(id, n)
     where n.id = k.id
    returning n.id, (n.last_slice_id - k.n)::text as base`.execute(uow.db);
  const next = new Map(tops.map((t) => [t.id, BigInt(t.base)]));
  const sliceIds = grants.map((g) => {
    const id = (next.get(g.node_id) ?? 0n) + 1n;
    next.set(g.node_id, id);
    return String(id);
  });
  const { rows } = await sql<{ node_id: string; subscription_id: string; slice_id: string; slice_bytes: string }>`
    insert into traffic_slices (node_id, subscription_id, slice_id, slice_bytes, used_bytes, granted_at)
    select k.node_id, k.subscription_id, k.slice_id, k.bytes, 0, ${now}
      from unnest(${grants.map((g) => g.node_id)}::text[], ${grants.map((g) => g.subscription_id)}::text[],
                  ${sliceIds}::int8[], ${grants.map((g) => String(g.bytes))}::int8[]) as k(node_id, subscription_id, slice_id, bytes)
    on conflict (node_id, subscription_id) do update
       set slice_id = excluded.slice_id, slice_bytes = excluded.slice_bytes, used_bytes = 0, granted_at = excluded.granted_at
    returning node_id, subscription_id, slice_id::text as slice_id, slice_bytes::text as slice_bytes`.execute(uow.db);
  await bumpNodeRevisions(uow, [...new Set(rows.map((r) => r.node_id))]);
  return rows
    .map((r) => ({ node_id: r.node_id, subscription_id: r.subscription_id, slice_id: r.slice_id, slice_bytes: Number(r.slice_bytes) }))
    .sort((a, b) => (a.node_id + a.subscription_id < b.node_id + b.subscription_id ? -1 : 1));
}

/**
 * The usage credit's part (in its unit of work, with the node's row locked), as a step of the
 * credit's own statement: the raw bytes the node reported per subscription (`usage`, a CTE of
 * rows (id, raw_up, raw_down)) count against the node's slices. Returns the subscriptions whose
 * slice is now half used (column `subscription_id`, `half`); grantSuccessorSlices gives them
 * their next one.
 */
export const chargeTrafficSlicesSql = (nodeId: string, usage: string) => sql<{ subscription_id: string; half: boolean }>`
  update traffic_slices t
     set used_bytes = ${saturated('t.used_bytes')} + u.raw_up + u.raw_down
    from ${sql.table(usage)} u
   where t.node_id = ${nodeId} and t.subscription_id = u.id
  returning t.subscription_id, ${halfUsedSliceSql('t')} as half`;

/** Slices charged half used (chargeTrafficSlicesSql) get their successor (grantTrafficSlices), and the node a new revision. Returns the new grants. */
export async function grantSuccessorSlices(uow: UnitOfWork, nodeId: string, half: readonly string[], now: Date): Promise<SliceGrant[]> {
  return half.length ? grantTrafficSlices(uow, [nodeId], now, { subscriptions: [...half] }) : [];
}

/** A node's slices, by subscription (for the desired-state loader and tests). */
export async function readTrafficSlices(
  uow: Pick<UnitOfWork, 'db'>,
  nodeIds: readonly string[],
): Promise<Array<{ node_id: string; subscription_id: string; slice_id: string; slice_bytes: string; used_bytes: string }>> {
  if (nodeIds.length === 0) return [];
  const { rows } = await sql<{ node_id: string; subscription_id: string; slice_id: string; slice_bytes: string; used_bytes: string }>`
    select node_id, subscription_id, slice_id::text as slice_id, slice_bytes::text as slice_bytes, used_bytes::text as used_bytes
      from traffic_slices where node_id = any(${[...nodeIds]}::text[])
     order by node_id, subscription_id`.execute(uow.db);
  return rows;
}
