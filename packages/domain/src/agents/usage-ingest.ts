import { sql } from 'kysely';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import { creditNodeUsage, lockNodeForUsage, settleNodeUsage, summedUsage } from './usage-credit.ts';

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
   * Active subscriptions this report brought to (or past) their traffic limit: stored limited (or
   * expired, the status rule) in the report's own unit, audited, their nodes bumped.
   */
  limited: string[];
}

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
 * Limits are judged on charged bytes, the ones used_bytes holds. Subscriptions the report
 * brought to their limit are stored limited in the same unit (writeReachedLimits), so the
 * revision that drops their users commits with the usage that reached the limit. A deadlock with another node's report
 * (both crediting the same subscriptions) is retried; see bench/BENCHMARKS.md for why the
 * subscriptions are not locked in id order first.
 */
export async function ingestUsageReport(
  deps: UnitOfWorkDeps,
  nodeId: string,
  report: { report_id: bigint; entries: readonly UsageDelta[] },
): Promise<UsageIngestResult> {
  const { batch, invalid } = summedUsage(report.entries);
  const now = deps.clock.now();
  // Two nodes crediting the same subscriptions can deadlock; the loser rolled back whole
  // (nothing was applied) and the unit runs again.
  return unitOfWork(
    deps,
    async (uow) => {
      const node = await lockNodeForUsage(uow.db, nodeId);
      if (!node || BigInt(node.last) >= report.report_id) {
        return { report_id: report.report_id, applied: false, accepted: 0, dropped: 0, not_served: 0, invalid: 0, limited: [] };
      }
      const credit = await creditNodeUsage(deps, uow, nodeId, node.multiplier, { batch }, now);
      // The node's own row is held from the start here; the others serving a subscription this
      // report limited are locked now, in id order (a deadlock with another report is retried).
      await bumpNodeRevisions(uow, credit.limited_nodes);
      await settleNodeUsage(uow, nodeId, credit, now, {
        dropped: invalid + credit.uncredited,
        set: { last_usage_report_id: sql`${String(report.report_id)}::int8` as never, last_seen_at: now },
      });
      return {
        report_id: report.report_id,
        applied: true,
        accepted: credit.accepted,
        dropped: invalid + credit.uncredited,
        not_served: credit.not_served,
        invalid,
        limited: credit.limited,
      };
    },
    { attempts: 5 },
  );
}
