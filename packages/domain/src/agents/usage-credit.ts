import type { Renewal } from '@svc/db';
import { type RawBuilder, sql } from 'kysely';
import type { DomainEvent } from '../events/catalogue.ts';
import { recordEvents } from '../events/record-event.ts';
import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import { accessGroupsServedBy } from '../fleet/serving.ts';
import { chargeTrafficSlicesSql, grantSuccessorSlices } from '../limits/traffic-slices.ts';
import { applyNodeQuota } from '../nodes/node-traffic.ts';
import { JOBS } from '../shared/jobs.ts';
import { int8Array, textArray } from '../shared/pg-array.ts';
import { isStorableText } from '../shared/text.ts';
import { type UnitOfWork, type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import { nextPeriodStart, writeReachedLimits } from '../subscriptions/limits.ts';
import { MAX_DELTA, MAX_SUM, saturated } from './usage-bounds.ts';
import type { UsageDelta } from './usage-ingest.ts';

// The crediting rule of usage, once, for both ways a report reaches it: at once
// (ingestUsageReport, usage-ingest.ts) and staged then folded (usage-fold.ts).

const HOUR_MS = 3600_000;

/** A node's usage summed per subscription: ids in order, the raw bytes each way. */
export interface UsageBatch {
  ids: string[];
  up: bigint[];
  down: bigint[];
}

/**
 * A report's entries checked and summed per subscription: an entry whose id can name no
 * subscription (the text rule of shared/text.ts, 1-64 characters) or whose delta is negative
 * or absurd is counted invalid; entries of nothing are left out.
 */
export function summedUsage(entries: readonly UsageDelta[]): { batch: UsageBatch; invalid: number } {
  const sums = new Map<string, [bigint, bigint]>();
  let invalid = 0;
  for (const e of entries) {
    if (
      e.uplink_bytes < 0n ||
      e.downlink_bytes < 0n ||
      e.uplink_bytes > MAX_DELTA ||
      e.downlink_bytes > MAX_DELTA ||
      e.subscription_id.length === 0 ||
      e.subscription_id.length > 64 ||
      !isStorableText(e.subscription_id)
    ) {
      invalid++;
      continue;
    }
    if (e.uplink_bytes === 0n && e.downlink_bytes === 0n) continue;
    addUsage(sums, e.subscription_id, e.uplink_bytes, e.downlink_bytes);
  }
  for (const v of sums.values()) {
    if (v[0] > MAX_DELTA) v[0] = MAX_DELTA;
    if (v[1] > MAX_DELTA) v[1] = MAX_DELTA;
  }
  return { batch: batchOf(sums), invalid };
}

/** Adds one subscription's bytes to per-subscription sums. */
export function addUsage(sums: Map<string, [bigint, bigint]>, id: string, up: bigint, down: bigint): void {
  const s = sums.get(id);
  if (s) {
    s[0] += up;
    s[1] += down;
  } else sums.set(id, [up, down]);
}

/** Sums per subscription as a batch, ids in order. */
export function batchOf(sums: ReadonlyMap<string, readonly [bigint, bigint]>): UsageBatch {
  const ids = [...sums.keys()].sort();
  return {
    ids,
    up: ids.map((id) => (sums.get(id) as [bigint, bigint])[0]),
    down: ids.map((id) => (sums.get(id) as [bigint, bigint])[1]),
  };
}

/**
 * What a credit takes: a report's entries summed per subscription (`batch`, the report credited
 * at once), or staged usage_inbox rows of the node, by part and report id (`inbox`, a fold:
 * PostgreSQL sums their entries per subscription, so they are not read out and sent back).
 */
export type UsageSource = { batch: UsageBatch } | { inbox: ReadonlyArray<{ part: number; report_id: string }> };

/** The source as rows (id, raw_up, raw_down), one per subscription, and the index condition on those ids for the counters' update. */
function usageRows(nodeId: string, source: UsageSource): { rows: RawBuilder<unknown>; ids: RawBuilder<unknown> } {
  if ('batch' in source) {
    const ids = textArray(source.batch.ids);
    return {
      rows: sql`select * from unnest(${ids}, ${int8Array(source.batch.up)}, ${int8Array(source.batch.down)}) as r(id, raw_up, raw_down)`,
      ids,
    };
  }
  const parts = source.inbox.map((k) => k.part);
  const reports = source.inbox.map((k) => k.report_id);
  return {
    rows: sql`select e.id, least(sum(e.up), ${String(MAX_SUM)}::int8)::int8 as raw_up, least(sum(e.down), ${String(MAX_SUM)}::int8)::int8 as raw_down
                from usage_inbox i
                join unnest(${parts}::int2[], ${reports}::int8[]) as k(part, report_id)
                  on i.node_id = ${nodeId} and i.part = k.part and i.report_id = k.report_id
                cross join lateral unnest(i.ids, i.uplink, i.downlink) as e(id, up, down)
               group by e.id`,
    // The ids as one array (an InitPlan): the counters are then read through their primary key.
    ids: sql`array(select id from r)`,
  };
}

/** The node row as a credit reads it, locked (FOR UPDATE) until the unit ends; undefined for a node that is gone. */
export interface NodeForUsage {
  id: string;
  /** int8 as text: report ids may exceed what a JS number holds exactly. */
  last: string;
  /** numeric as stored. */
  multiplier: string;
}

export async function lockNodeForUsage(trx: UnitOfWork['db'], nodeId: string): Promise<NodeForUsage | undefined> {
  return trx
    .selectFrom('nodes')
    .select(['id', sql<string>`last_usage_report_id::text`.as('last'), sql<string>`traffic_multiplier::text`.as('multiplier')])
    .where('id', '=', nodeId)
    .forUpdate()
    .executeTakeFirst();
}

/** What a credit moved, for the node's own accounting (settleNodeUsage). */
export interface NodeCredit {
  accepted: number;
  /** Entries of subscriptions the node does not serve. */
  not_served: number;
  /** Not credited: not served, or deleted between the served check and the update. */
  uncredited: number;
  raw: bigint;
  charged: bigint;
  /** Subscriptions this credit brought to their limit and stored as limited (or expired), in its own unit. */
  limited: string[];
  /**
   * The nodes serving them: their revisions must be bumped in this unit, and the caller does it
   * (bumpNodeRevisions) with the nodes it settles, so node rows are locked in id order, after
   * every counters row (a period reset locks counters, then nodes).
   */
  limited_nodes: string[];
}

/**
 * One node's usage credited, the rule of both paths (a report at once, ingestUsageReport; staged
 * reports folded together, usage-fold.ts): the subscriptions this node serves get the charged
 * bytes (raw × `multiplier`, rounded down per subscription and direction of the batch) and the
 * hourly rows of `at`'s UTC hour the charged and raw bytes; terms that start on first use start
 * at `at`; 80%/100% crossings raise their events; the node's traffic slices are charged. The
 * node row is not touched: settleNodeUsage writes what this returns (a fold settles each node
 * once, last, so it holds a node's row only while it commits).
 */
export async function creditNodeUsage(
  deps: UnitOfWorkDeps,
  uow: UnitOfWork,
  nodeId: string,
  multiplier: string,
  source: UsageSource,
  at: Date,
): Promise<NodeCredit> {
  const trx = uow.db;
  const now = at;
  const hour = new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
  // Charged bytes: floor(raw × multiplier) in exact numeric arithmetic. numeric costs about
  // 2 µs an entry on PostgreSQL (5,000 entries: 9 ms), so the default multiplier of 1, which
  // charges the raw bytes as they are, skips it.
  const chargedOf = (column: string) =>
    Number(multiplier) === 1 ? sql.ref(column) : sql`floor(${sql.ref(column)} * ${multiplier}::numeric)::int8`;
  let reported = 0;
  let accepted = 0;
  let served = 0;
  let limited: string[] = [];
  let limitedNodes: string[] = [];
  let raw = 0n;
  let charged = 0n;
  if ('inbox' in source ? source.inbox.length > 0 : source.batch.ids.length > 0) {
    const usage = usageRows(nodeId, source);
    // One statement: credit the subscriptions this node serves with the charged bytes
    // (raw × the node's multiplier, rounded down: see node-traffic.ts), and add the charged
    // and raw bytes to their hourly rows (only those: another node's user, or one deleted
    // meanwhile, is dropped).
    const credited = await sql<{
      reported: number;
      accepted: number;
      served: number;
      reached: string[] | null;
      past: string[] | null;
      raw: string;
      charged: string;
      crossed: TrafficCrossing[] | null;
      started: string[] | null;
      half: string[] | null;
    }>`
        with r as (${usage.rows}), v as (
          select r.id, r.raw_up, r.raw_down, ${chargedOf('r.raw_up')} as up, ${chargedOf('r.raw_down')} as down from r
        ), reach as ${accessGroupsServedBy(trx, nodeId, now)}
        , served as (
          -- With what the rest reads of the subscription (its limit for the crossings, a term
          -- waiting for its first use), read once here, as of the statement's snapshot.
          select v.*, s.client_id, s.renewal, s.status, s.traffic_limit_bytes, s.starts_on_first_use_seconds
            from v join subscriptions s on s.id = v.id
           where exists (select 1 from subscription_access_groups sag
                          where sag.subscription_id = v.id and sag.access_group_id in (select access_group_id from reach))
              or exists (select 1 from subscription_group_grace sg
                          where sg.subscription_id = v.id and sg.until > ${now}
                            and sg.access_group_id in (select access_group_id from reach))
        ), credited as (
          -- Issue 37.1: the counters are a narrow row of their own (subscription_counters), so a
          -- credit rewrites ~90 B instead of the ~400 B subscription row.
          update subscription_counters sc
             set used_bytes = ${saturated('sc.used_bytes')} + v.up + v.down,
                 period_uplink_bytes = ${saturated('sc.period_uplink_bytes')} + v.up,
                 period_downlink_bytes = ${saturated('sc.period_downlink_bytes')} + v.down,
                 lifetime_used_bytes = ${saturated('sc.lifetime_used_bytes')} + v.up + v.down
            from served v
           -- The report's ids again, as an index condition: joined to the served rows alone,
           -- the planner hashed the whole table (a sequential scan of every counter a report).
           where sc.subscription_id = v.id and sc.subscription_id = any(${usage.ids})
          returning v.id, v.client_id, v.renewal, v.up, v.down, v.raw_up, v.raw_down, v.status, sc.used_bytes, v.traffic_limit_bytes,
                    v.starts_on_first_use_seconds
        ), started as (
          -- A term that starts on first use starts with the first traffic (start-on-first-use.ts):
          -- traffic carried, charged or not (a node of multiplier 0 is used too). Rare: the
          -- subscription row is written only then. Not started meanwhile by another credit (the
          -- condition is checked again on the row as it is once locked).
          update subscriptions s
             set expires_at = ${now}::timestamptz + make_interval(secs => s.starts_on_first_use_seconds),
                 start_by = null,
                 starts_on_first_use_seconds = null
            from credited c
           where s.id = c.id and c.starts_on_first_use_seconds is not null and c.raw_up + c.raw_down > 0
             and s.starts_on_first_use_seconds is not null
          returning s.id
        ), hourly as (
          insert into usage_hourly (subscription_id, node_id, hour, uplink_bytes, downlink_bytes, raw_uplink_bytes, raw_downlink_bytes)
          select c.id, ${nodeId}, ${hour}, c.up, c.down, c.raw_up, c.raw_down from credited c
          on conflict (subscription_id, hour, node_id) do update
             set uplink_bytes = ${saturated('usage_hourly.uplink_bytes')} + excluded.uplink_bytes,
                 downlink_bytes = ${saturated('usage_hourly.downlink_bytes')} + excluded.downlink_bytes,
                 -- A row from before multipliers holds no raw bytes: they were the charged ones.
                 raw_uplink_bytes = ${saturated(sql`coalesce(usage_hourly.raw_uplink_bytes, usage_hourly.uplink_bytes)`)} + excluded.raw_uplink_bytes,
                 raw_downlink_bytes = ${saturated(sql`coalesce(usage_hourly.raw_downlink_bytes, usage_hourly.downlink_bytes)`)} + excluded.raw_downlink_bytes
          returning 1
        ), sliced as (
          -- Issue 36: the raw bytes count against the node's traffic slices (limits/traffic-slices.ts).
          ${chargeTrafficSlicesSql(nodeId, 'r')}
        )
        select (select count(*) from r)::int as reported, (select count(*) from credited)::int as accepted, (select count(*) from served)::int as served,
               (select count(*) from hourly)::int as hourly,
               (select coalesce(sum(raw_up + raw_down), 0) from credited)::text as raw,
               (select coalesce(sum(up + down), 0) from credited)::text as charged,
               (select array_agg(id order by id) from started) as started,
               (select array_agg(id order by id) from credited
                 where status = 'active' and traffic_limit_bytes is not null and used_bytes >= traffic_limit_bytes) as reached,
               (select array_agg(id order by id) from credited
                 where status <> 'active' and traffic_limit_bytes is not null and used_bytes >= traffic_limit_bytes) as past,
               -- 80% and 100% of a limit crossed by this report (before < mark <= after): rare, each an event.
               (select json_agg(json_build_object('id', id, 'client_id', client_id, 'renewal', renewal,
                                                  'used', used_bytes::text, 'limit', traffic_limit_bytes::text,
                                                  'p80', (used_bytes - up - down) * 5 < traffic_limit_bytes * 4 and used_bytes * 5 >= traffic_limit_bytes * 4,
                                                  'p100', used_bytes - up - down < traffic_limit_bytes and used_bytes >= traffic_limit_bytes))
                  from credited
                 where status = 'active' and traffic_limit_bytes > 0 and up + down > 0
                   and (used_bytes - up - down) * 5 < traffic_limit_bytes * 4 and used_bytes * 5 >= traffic_limit_bytes * 4
                    or status = 'active' and traffic_limit_bytes > 0 and up + down > 0
                   and used_bytes - up - down < traffic_limit_bytes and used_bytes >= traffic_limit_bytes) as crossed,
               (select array_agg(subscription_id order by subscription_id) from sliced where half) as half`.execute(trx);
    reported = credited.rows[0]?.reported ?? 0;
    accepted = credited.rows[0]?.accepted ?? 0;
    served = credited.rows[0]?.served ?? 0;
    raw = BigInt(credited.rows[0]?.raw ?? 0);
    charged = BigInt(credited.rows[0]?.charged ?? 0);
    await recordEvents(uow, trafficCrossingEvents(credited.rows[0]?.crossed ?? [], now), now);
    // A term started: its expiry reaches the nodes (UserLimits.not_after_ms) in a new
    // revision. After commit, in a unit of its own: this one holds its node's row, and
    // locking the others here could deadlock with their own reports.
    const started = credited.rows[0]?.started ?? [];
    if (started.length > 0)
      uow.afterCommit(() =>
        unitOfWork(deps, async (u) => void (await bumpNodeRevisions(u, await nodesOfSubscriptions(u.db, started))), { attempts: 3 }),
      );
    // Issue 36: a slice half used gets its successor (limits/traffic-slices.ts).
    await grantSuccessorSlices(uow, nodeId, credited.rows[0]?.half ?? [], now);
    // A limit reached is written down by this unit (the status rule: every write that moves
    // used_bytes stores the status): limited (or expired, if that came first), audited, its
    // nodes bumped by the caller, all in this commit, so the stored status is what the desired
    // state reads and a crash loses neither. Rare: statements of its own only then. The rows
    // past their limit are read again, locked, whatever status this statement's snapshot gave
    // them (`past` too), so an edit that committed meanwhile (a subscription enabled again) is
    // judged as it now is. A row another transaction holds (an admin's edit, which may write the
    // counters next) is not waited for: one this snapshot saw active goes to the worker after
    // commit (subscriptions.enforce-limits), and the sweep catches what that misses.
    const reached = credited.rows[0]?.reached ?? [];
    const past = [...reached, ...(credited.rows[0]?.past ?? [])];
    if (past.length > 0) {
      const written = await writeReachedLimits(uow, now, { ids: past, batch: past.length, skipLocked: true });
      limited = written.changed;
      limitedNodes = written.nodes;
      const done = new Set(limited);
      const skipped = reached.filter((id) => !done.has(id));
      if (skipped.length > 0) uow.enqueue(JOBS.enforceLimits, { ids: skipped });
    }
  }
  // `reported`: the subscriptions the source named (its entries summed per subscription).
  return { accepted, not_served: reported - served, uncredited: reported - accepted, raw, charged, limited, limited_nodes: limitedNodes };
}

/**
 * The node's own accounting of what was credited: what it carried (raw, also toward its quota
 * period) and what it charged, the entries dropped (`dropped`, with the caller's `set`); its
 * quota applied on the counters as they now are (the update locks the row: a quota reached takes
 * its inbounds out of service in this unit, once a period). A node deleted meanwhile has nothing
 * to settle.
 */
export async function settleNodeUsage(
  uow: UnitOfWork,
  nodeId: string,
  credit: Pick<NodeCredit, 'raw' | 'charged'>,
  at: Date,
  extra: { dropped: number; set?: Record<string, unknown> },
): Promise<void> {
  const { raw, charged } = credit;
  const set = {
    ...extra.set,
    ...(extra.dropped > 0 ? { usage_entries_dropped: sql`usage_entries_dropped + ${extra.dropped}` as never } : {}),
    ...(raw > 0n
      ? {
          traffic_raw_bytes: sql`traffic_raw_bytes + ${String(raw)}::int8` as never,
          traffic_charged_bytes: sql`traffic_charged_bytes + ${String(charged)}::int8` as never,
          traffic_period_bytes: sql`traffic_period_bytes + ${String(raw)}::int8` as never,
        }
      : {}),
  };
  if (Object.keys(set).length > 0) {
    const node = await uow.db
      .updateTable('nodes')
      .set(set)
      .where('id', '=', nodeId)
      .returning(['id', 'traffic_quota_bytes', 'traffic_period_bytes', 'traffic_limited_at'])
      .executeTakeFirst();
    if (node && raw > 0n) await applyNodeQuota(uow, node, at, 'quota reached');
  }
}

/** A subscription whose charged traffic this report took past 80% or 100% of its limit. */
interface TrafficCrossing {
  id: string;
  client_id: string;
  renewal: Renewal;
  used: string;
  limit: string;
  p80: boolean;
  p100: boolean;
}

/** subscription.traffic_80_percent / _100_percent for each mark a report crossed (docs/events.md). */
function trafficCrossingEvents(crossed: readonly TrafficCrossing[], now: Date): DomainEvent[] {
  return crossed.flatMap((c) => {
    const resets = nextPeriodStart(c.renewal, now);
    const payload = {
      subscription_id: c.id,
      client_id: c.client_id,
      used_bytes: Number(c.used),
      traffic_limit_bytes: Number(c.limit),
      resets_at: resets ? resets.toISOString() : null,
    };
    return [
      ...(c.p80 ? [{ type: 'subscription.traffic_80_percent' as const, payload }] : []),
      ...(c.p100 ? [{ type: 'subscription.traffic_100_percent' as const, payload }] : []),
    ];
  });
}
