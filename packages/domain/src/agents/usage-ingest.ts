import type { Renewal } from '@svc/db';
import { sql } from 'kysely';
import type { DomainEvent } from '../events/catalogue.ts';
import { recordEvents } from '../events/record-event.ts';
import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import { accessGroupsServedBy } from '../fleet/serving.ts';
import { chargeTrafficSlices } from '../limits/traffic-slices.ts';
import { applyNodeQuota } from '../nodes/node-traffic.ts';
import { JOBS } from '../shared/jobs.ts';
import { isStorableText } from '../shared/text.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import { nextPeriodStart } from '../subscriptions/limits.ts';

export interface UsageDelta {
  subscription_id: string;
  uplink_bytes: bigint;
  downlink_bytes: bigint;
}

export interface UsageIngestResult {
  report_id: bigint;
  /** False for a replayed or older report_id: nothing changed. */
  applied: boolean;
  /** Subscriptions credited. */
  accepted: number;
  /**
   * Entries dropped: for subscriptions this node does not serve (unknown ones included), with a
   * subscription id that is no storable text of 1-64 characters, or with a negative or oversized delta.
   */
  dropped: number;
  /** Of `dropped`, the subscriptions (summed per id) this node does not serve: a node charging others shows here. */
  not_served: number;
  /** Of `dropped`, the entries that could never name a subscription or carried a negative or oversized delta. */
  invalid: number;
  /**
   * Active subscriptions this report brought to (or past) their traffic limit: after commit the
   * job `subscriptions.enforce-limits` runs enforceTrafficLimits on them, which applies the status rule.
   */
  limit_candidates: string[];
}

const HOUR_MS = 3600_000;
/** A single delta above this (1 PiB) is an agent bug, not traffic. */
const MAX_DELTA = 2n ** 50n;

/**
 * UsageReport, exactly once (spec 4.1 rule 3): in one transaction with the node's row
 * locked, a report_id above the node's last accepted one adds the deltas to the hourly rows
 * (per subscription, node and UTC hour of receipt) and to each subscription's used_bytes,
 * and becomes the last accepted id; a replayed or older id changes nothing. Both are
 * acknowledged with the same id by the caller.
 *
 * A node is credited only for subscriptions it serves (issue 12.4; fleet/serving.ts: one of
 * the subscription's access groups grants an inbound of the node, or did within the grace).
 * Entries for others (unknown, deleted meanwhile, or another node's users), and entries that
 * could never name a subscription (an id with NUL or a lone surrogate, empty or too long: the
 * text rule of shared/text.ts) are dropped and counted on the node, never failing the report:
 * an agent retries an unacknowledged report forever.
 *
 * Three statements whatever the number of entries: lock the node, credit subscriptions and
 * hourly rows in one statement (the "served by this node" condition folded in), move the
 * node's last id and its traffic counts.
 *
 * The node's traffic multiplier (issue 35.4; nodes/node-traffic.ts) scales what it charges:
 * subscriptions (used_bytes, period_*_bytes, lifetime_used_bytes) and the hourly rows'
 * uplink/downlink_bytes get floor(raw × multiplier) per subscription and direction of the
 * report (exact numeric arithmetic, so every replica and replay computes the same bytes); the
 * hourly rows keep the raw bytes beside them (raw_*_bytes), the node its raw and charged totals
 * and its quota period's raw bytes. A report that brings the node to its quota limits it in the
 * same unit (applyNodeQuota: a new revision without its inbounds, links changed, audited).
 * Limit candidates are judged on charged bytes, the ones used_bytes holds. Subscriptions the report brought to their limit are handed to the worker
 * after commit, so they stop being served at once. A deadlock with another node's report
 * (both crediting the same subscriptions) is retried; see bench/BENCHMARKS.md for why the
 * subscriptions are not locked in id order first.
 */
export async function ingestUsageReport(
  deps: UnitOfWorkDeps,
  nodeId: string,
  report: { report_id: bigint; entries: readonly UsageDelta[] },
): Promise<UsageIngestResult> {
  // Several entries of one subscription in one report are summed; bad deltas are dropped.
  const sums = new Map<string, [bigint, bigint]>();
  let invalid = 0;
  for (const e of report.entries) {
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
    const s = sums.get(e.subscription_id);
    if (s) {
      s[0] += e.uplink_bytes;
      s[1] += e.downlink_bytes;
    } else sums.set(e.subscription_id, [e.uplink_bytes, e.downlink_bytes]);
  }
  const now = deps.clock.now();
  const hour = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);

  const ids = [...sums.keys()].sort();
  const up = ids.map((id) => String((sums.get(id) as [bigint, bigint])[0]));
  const down = ids.map((id) => String((sums.get(id) as [bigint, bigint])[1]));

  // Two nodes crediting the same subscriptions can deadlock; the loser rolled back whole
  // (nothing was applied) and the unit runs again.
  return unitOfWork(
    deps,
    async (uow) => {
      const trx = uow.db;
      // As text: report ids are int64 and may exceed what a JS number holds exactly; the
      // multiplier is numeric, passed on to the crediting statement as it is stored.
      const node = await trx
        .selectFrom('nodes')
        .select([
          sql<string>`last_usage_report_id::text`.as('last'),
          sql<string>`traffic_multiplier::text`.as('multiplier'),
          sql<string>`traffic_period_bytes::text`.as('period'),
          'traffic_quota_bytes',
          'traffic_limited_at',
        ])
        .where('id', '=', nodeId)
        .forUpdate()
        .executeTakeFirst();
      if (!node || BigInt(node.last) >= report.report_id) {
        return { report_id: report.report_id, applied: false, accepted: 0, dropped: 0, not_served: 0, invalid: 0, limit_candidates: [] };
      }
      // Charged bytes: floor(raw × multiplier) in exact numeric arithmetic. numeric costs about
      // 2 µs an entry on PostgreSQL (5,000 entries: 9 ms), so the default multiplier of 1, which
      // charges the raw bytes as they are, skips it.
      const chargedOf = (column: string) =>
        Number(node.multiplier) === 1 ? sql.ref(column) : sql`floor(${sql.ref(column)} * ${node.multiplier}::numeric)::int8`;
      let accepted = 0;
      let served = 0;
      let limitCandidates: string[] = [];
      let raw = 0n;
      let charged = 0n;
      if (ids.length > 0) {
        // One statement: credit the subscriptions this node serves with the charged bytes
        // (raw × the node's multiplier, rounded down: see node-traffic.ts), and add the charged
        // and raw bytes to their hourly rows (only those: another node's user, or one deleted
        // meanwhile, is dropped).
        const credited = await sql<{
          accepted: number;
          served: number;
          reached: string[] | null;
          raw: string;
          charged: string;
          crossed: TrafficCrossing[] | null;
          started: string[] | null;
        }>`
            with r as (
              select * from unnest(${ids}::text[], ${up}::int8[], ${down}::int8[]) as r(id, raw_up, raw_down)
            ), v as (
              select r.id, r.raw_up, r.raw_down, ${chargedOf('r.raw_up')} as up, ${chargedOf('r.raw_down')} as down from r
            ), reach as ${accessGroupsServedBy(trx, nodeId, now)}
            , served as (
              select v.* from v
               where exists (select 1 from subscription_access_groups sag
                              where sag.subscription_id = v.id and sag.access_group_id in (select access_group_id from reach))
                  or exists (select 1 from subscription_group_grace sg
                              where sg.subscription_id = v.id and sg.until > ${now}
                                and sg.access_group_id in (select access_group_id from reach))
            ), starting as (
              -- Terms this report starts (read before the update: the statement's snapshot). From
              -- the partial index of terms not started yet (subscriptions_first_use), which is
              -- tiny: a join of the served rows would read the table.
              select s.id from subscriptions s
               where s.starts_on_first_use_seconds is not null and s.id = any(${ids}::text[])
                 and exists (select 1 from served v where v.id = s.id and v.raw_up + v.raw_down > 0)
            ), credited as (
              update subscriptions s
                 set used_bytes = s.used_bytes + v.up + v.down,
                     period_uplink_bytes = s.period_uplink_bytes + v.up,
                     period_downlink_bytes = s.period_downlink_bytes + v.down,
                     lifetime_used_bytes = s.lifetime_used_bytes + v.up + v.down,
                     -- A term that starts on first use starts with the first traffic (start-on-first-use.ts):
                     -- traffic carried, charged or not (a node of multiplier 0 is used too).
                     expires_at = case when s.starts_on_first_use_seconds is not null and v.raw_up + v.raw_down > 0
                                       then ${now}::timestamptz + make_interval(secs => s.starts_on_first_use_seconds)
                                       else s.expires_at end,
                     start_by = case when s.starts_on_first_use_seconds is not null and v.raw_up + v.raw_down > 0 then null else s.start_by end,
                     starts_on_first_use_seconds = case when v.raw_up + v.raw_down > 0 then null else s.starts_on_first_use_seconds end
                from served v
               -- The report's ids again, as an index condition: joined to the served rows alone,
               -- the planner hashed the whole table (a sequential scan of every subscription a report).
               where s.id = v.id and s.id = any(${ids}::text[])
              returning s.id, s.client_id, s.renewal, v.up, v.down, v.raw_up, v.raw_down, s.status, s.used_bytes, s.traffic_limit_bytes
            ), hourly as (
              insert into usage_hourly (subscription_id, node_id, hour, uplink_bytes, downlink_bytes, raw_uplink_bytes, raw_downlink_bytes)
              select c.id, ${nodeId}, ${hour}, c.up, c.down, c.raw_up, c.raw_down from credited c
              on conflict (subscription_id, hour, node_id) do update
                 set uplink_bytes = usage_hourly.uplink_bytes + excluded.uplink_bytes,
                     downlink_bytes = usage_hourly.downlink_bytes + excluded.downlink_bytes,
                     -- A row from before multipliers holds no raw bytes: they were the charged ones.
                     raw_uplink_bytes = coalesce(usage_hourly.raw_uplink_bytes, usage_hourly.uplink_bytes) + excluded.raw_uplink_bytes,
                     raw_downlink_bytes = coalesce(usage_hourly.raw_downlink_bytes, usage_hourly.downlink_bytes) + excluded.raw_downlink_bytes
              returning 1
            )
            select (select count(*) from credited)::int as accepted, (select count(*) from served)::int as served,
                   (select count(*) from hourly)::int as hourly,
                   (select coalesce(sum(raw_up + raw_down), 0) from credited)::text as raw,
                   (select coalesce(sum(up + down), 0) from credited)::text as charged,
                   (select array_agg(id order by id) from starting) as started,
                   (select array_agg(id order by id) from credited
                     where status = 'active' and traffic_limit_bytes is not null and used_bytes >= traffic_limit_bytes) as reached,
                   -- 80% and 100% of a limit crossed by this report (before < mark <= after): rare, each an event.
                   (select json_agg(json_build_object('id', id, 'client_id', client_id, 'renewal', renewal,
                                                      'used', used_bytes::text, 'limit', traffic_limit_bytes::text,
                                                      'p80', (used_bytes - up - down) * 5 < traffic_limit_bytes * 4 and used_bytes * 5 >= traffic_limit_bytes * 4,
                                                      'p100', used_bytes - up - down < traffic_limit_bytes and used_bytes >= traffic_limit_bytes))
                      from credited
                     where status = 'active' and traffic_limit_bytes > 0 and up + down > 0
                       and (used_bytes - up - down) * 5 < traffic_limit_bytes * 4 and used_bytes * 5 >= traffic_limit_bytes * 4
                        or status = 'active' and traffic_limit_bytes > 0 and up + down > 0
                       and used_bytes - up - down < traffic_limit_bytes and used_bytes >= traffic_limit_bytes) as crossed`.execute(trx);
        accepted = credited.rows[0]?.accepted ?? 0;
        served = credited.rows[0]?.served ?? 0;
        limitCandidates = credited.rows[0]?.reached ?? [];
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
        // Issue 36: the raw bytes count against the node's traffic slices; one half used gets its successor (limits/traffic-slices.ts).
        await chargeTrafficSlices(uow, nodeId, new Map(ids.map((id) => [id, sumOf(sums, id)])), now);
      }
      const dropped = invalid + (sums.size - accepted);
      // The node's own accounting: what it carried (raw, also toward its quota) and what it charged.
      await trx
        .updateTable('nodes')
        .set({
          last_usage_report_id: sql`${String(report.report_id)}::int8` as never,
          usage_entries_dropped: sql`usage_entries_dropped + ${dropped}` as never,
          last_seen_at: now,
          ...(raw > 0n
            ? {
                traffic_raw_bytes: sql`traffic_raw_bytes + ${String(raw)}::int8` as never,
                traffic_charged_bytes: sql`traffic_charged_bytes + ${String(charged)}::int8` as never,
                traffic_period_bytes: sql`traffic_period_bytes + ${String(raw)}::int8` as never,
              }
            : {}),
        })
        .where('id', '=', nodeId)
        .execute();
      // A quota reached now takes the node's inbounds out of service in this unit (rare: once a period).
      if (raw > 0n)
        await applyNodeQuota(uow, { id: nodeId, ...node, traffic_period_bytes: BigInt(node.period) + raw }, now, 'quota reached');
      // Limits reached now are written down at once by the worker, not at its next sweep
      // (which still catches them if this enqueue is lost).
      if (limitCandidates.length > 0) uow.enqueue(JOBS.enforceLimits, { ids: limitCandidates });
      return {
        report_id: report.report_id,
        applied: true,
        accepted,
        dropped,
        not_served: sums.size - served,
        invalid,
        limit_candidates: limitCandidates,
      };
    },
    { attempts: 5 },
  );
}

/** Raw bytes of one subscription in the report, both ways. */
const sumOf = (sums: ReadonlyMap<string, [bigint, bigint]>, id: string): bigint => {
  const s = sums.get(id);
  return s ? s[0] + s[1] : 0n;
};

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
