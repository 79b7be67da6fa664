import type { NodeRow, Renewal } from '@svc/db';
import { z } from 'zod';
import { recordEvent } from '../events/record-event.ts';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';
import { nextPeriodStart, periodStart } from '../subscriptions/limits.ts';
import { SubscriptionRenewal } from '../subscriptions/subscription-fields.ts';

/**
 * A node's traffic multiplier and quota (issue 35.4; docs/agent-gateway.md, "Traffic
 * multipliers and node quotas").
 *
 * The multiplier scales what the node's usage charges to subscriptions: a report's raw bytes
 * for one subscription and direction are charged floor(raw × multiplier) bytes, computed in
 * exact decimal arithmetic (PostgreSQL numeric) by the usage ingest. Rounding down means a
 * report never charges more than multiplier × raw; 1 charges exactly what was reported, 0
 * nothing. The multiplier in force when a report arrives applies: a change charges nothing again.
 *
 * The quota counts the raw bytes the node carried (credited from its reports) in the period of
 * its renewal (periodStart of subscriptions/limits.ts: the same UTC boundaries as a
 * subscription's). A node whose period usage reaches its quota is limited: its inbounds leave
 * its desired state and every subscription link until the period resets (the sweep) or the
 * admin raises or removes the quota. The rule is nodeQuotaReached; applyNodeQuota writes it down
 * wherever the usage or the quota changes (the ingest, create, PATCH, the period reset).
 */

/** At most four decimal places: what numeric(7,4) stores exactly. */
const MULTIPLIER_SCALE = 10_000;

/** What the node's usage charges per byte reported: 0 to 100, at most four decimal places (1: a byte is a byte). */
export const TrafficMultiplier = z
  .number()
  .min(0)
  .max(100)
  .refine((x) => Math.abs(x * MULTIPLIER_SCALE - Math.round(x * MULTIPLIER_SCALE)) < 1e-6, 'at most 4 decimal places')
  .meta({ description: 'bytes charged to subscriptions per byte the node reports: 0 to 100, at most 4 decimal places; 1 by default' });

/** Raw bytes the node may carry per quota period; null: no quota (0: limited at once). */
export const TrafficQuotaBytes = z
  .number()
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .nullable()
  .meta({ description: 'raw bytes the node may carry per quota period; null is no quota' });

/** When the quota's count starts over: the renewal periods of subscriptions (UTC). */
export const TrafficQuotaRenewal = SubscriptionRenewal.meta({ description: 'when the quota count starts over (UTC); default month' });

/** The multiplier as the database stores it (numeric(7,4)). */
export const multiplierText = (x: number): string => (Math.round(x * MULTIPLIER_SCALE) / MULTIPLIER_SCALE).toFixed(4);

/** The rule: a node with a quota is limited once the raw bytes it carried this period reach it. */
export function nodeQuotaReached(periodBytes: number | bigint, quotaBytes: number | null): boolean {
  return quotaBytes !== null && BigInt(periodBytes) >= BigInt(quotaBytes);
}

/** What applyNodeQuota needs of the node row (as locked by the caller). */
export interface NodeQuotaState {
  id: string;
  traffic_quota_bytes: number | string | null;
  traffic_period_bytes: number | string | bigint;
  traffic_limited_at: Date | null;
}

/**
 * Writes down what the rule says of this node now: limits it when its period usage reached its
 * quota and it is not limited, lifts the limit when it is limited and the rule no longer holds.
 * The caller holds the node row locked and passes its values as they now are (`now`: the
 * limit's start). Returns the
 * change made, if any.
 */
export async function applyNodeQuota(
  uow: UnitOfWork,
  node: NodeQuotaState,
  now: Date,
  reason: string,
): Promise<'limited' | 'lifted' | null> {
  const quota = node.traffic_quota_bytes === null ? null : Number(node.traffic_quota_bytes);
  const reached = nodeQuotaReached(BigInt(node.traffic_period_bytes), quota);
  const details = { period_bytes: Number(node.traffic_period_bytes), quota_bytes: quota, reason };
  if (reached && node.traffic_limited_at === null) {
    await nodeTrafficLimited(uow, node.id, now, details);
    return 'limited';
  }
  if (!reached && node.traffic_limited_at !== null) {
    await nodeTrafficLimitLifted(uow, node.id, now, { ...details, limited_since: node.traffic_limited_at.toISOString() });
    return 'lifted';
  }
  return null;
}

/**
 * The node reached its traffic quota: marked limited, its inbounds leave its desired state (a
 * new revision, compiled without them: desired-state's readInbounds) and every subscription
 * link (readGrantedInbounds), audited. The one place a node becomes limited: an event for it
 * (node.traffic_limited).
 */
async function nodeTrafficLimited(uow: UnitOfWork, nodeId: string, now: Date, details: Record<string, unknown>): Promise<void> {
  const { name, traffic_quota_renewal } = await uow.db
    .updateTable('nodes')
    .set({ traffic_limited_at: now })
    .where('id', '=', nodeId)
    .returning(['name', 'traffic_quota_renewal'])
    .executeTakeFirstOrThrow();
  await nodeServiceChanged(uow, nodeId);
  uow.audit({ action: 'node.traffic_limited', entity_type: 'node', entity_id: nodeId, details });
  const resets = nextPeriodStart(traffic_quota_renewal, now);
  await recordEvent(
    uow,
    {
      type: 'node.traffic_limited',
      payload: {
        node_id: nodeId,
        name,
        period_bytes: details.period_bytes as number,
        quota_bytes: details.quota_bytes as number,
        resets_at: resets ? resets.toISOString() : null,
      },
    },
    now,
  );
}

/**
 * The node's limit is lifted (its period reset, or its quota was raised or removed): its
 * inbounds are back in its desired state and in the links, audited. The one place a node stops
 * being limited (node.traffic_limit_lifted).
 */
async function nodeTrafficLimitLifted(uow: UnitOfWork, nodeId: string, now: Date, details: Record<string, unknown>): Promise<void> {
  const { name } = await uow.db
    .updateTable('nodes')
    .set({ traffic_limited_at: null })
    .where('id', '=', nodeId)
    .returning(['name'])
    .executeTakeFirstOrThrow();
  await nodeServiceChanged(uow, nodeId);
  uow.audit({ action: 'node.traffic_limit_lifted', entity_type: 'node', entity_id: nodeId, details });
  await recordEvent(
    uow,
    {
      type: 'node.traffic_limit_lifted',
      payload: {
        node_id: nodeId,
        name,
        reason: String(details.reason),
        period_bytes: details.period_bytes as number,
        quota_bytes: (details.quota_bytes as number | null) ?? null,
        limited_since: String(details.limited_since),
      },
    },
    now,
  );
}

/** The node's inbounds left or rejoined service: its agent gets a new revision, cached links drop. */
async function nodeServiceChanged(uow: UnitOfWork, nodeId: string): Promise<void> {
  await bumpNodeRevisions(uow, [nodeId]);
  uow.subscriptionLinksChanged();
}

/**
 * Starts the new quota period of nodes whose period ended (renewal day, week or month; the UTC
 * boundaries of periodStart): traffic_period_bytes goes back to 0 and traffic_period_started_at
 * to the boundary, the limit is lifted where the rule no longer holds, each reset audited. A
 * batch at a time, rows locked with SKIP LOCKED (two sweeps never reset a node twice); returns
 * how many nodes were reset. Like a subscription's period, the count starts over when the sweep
 * runs (every 30 s by default): traffic credited between the boundary and the sweep belongs to
 * the period that ended.
 */
export async function resetEndedNodeTrafficPeriods(ctx: DomainContext, batch = 500): Promise<{ reset: number; lifted: number }> {
  return unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const starts = {
      day: periodStart('day', now) as Date,
      week: periodStart('week', now) as Date,
      month: periodStart('month', now) as Date,
    };
    const due = await uow.db
      .selectFrom('nodes')
      .select(['id', 'traffic_quota_renewal', 'traffic_quota_bytes', 'traffic_period_bytes', 'traffic_limited_at'])
      .where((eb) =>
        eb.or(
          (['day', 'week', 'month'] as const).map((r) =>
            eb.and([eb('traffic_quota_renewal', '=', r), eb('traffic_period_started_at', '<', starts[r])]),
          ),
        ),
      )
      .orderBy('id')
      .limit(batch)
      .forUpdate()
      .skipLocked()
      .execute();
    let lifted = 0;
    for (const n of due) {
      const start = starts[n.traffic_quota_renewal as Exclude<Renewal, 'no_reset'>];
      await uow.db.updateTable('nodes').set({ traffic_period_bytes: 0, traffic_period_started_at: start }).where('id', '=', n.id).execute();
      // A node without a quota starts its count over too (its view shows this period's traffic), unaudited.
      if (n.traffic_quota_bytes !== null || n.traffic_limited_at !== null)
        uow.audit({
          action: 'node.traffic_period_reset',
          entity_type: 'node',
          entity_id: n.id,
          details: {
            renewal: n.traffic_quota_renewal,
            period_bytes: Number(n.traffic_period_bytes),
            period_started_at: start.toISOString(),
          },
        });
      if ((await applyNodeQuota(uow, { ...n, traffic_period_bytes: 0 }, now, 'quota period reset')) === 'lifted') lifted++;
    }
    return { reset: due.length, lifted };
  });
}

/** Drains resetEndedNodeTrafficPeriods (the worker's `nodes.traffic-sweep`). */
export async function sweepNodeTrafficPeriods(ctx: DomainContext): Promise<{ reset: number; lifted: number }> {
  const BATCH = 500;
  const total = { reset: 0, lifted: 0 };
  for (;;) {
    const r = await resetEndedNodeTrafficPeriods(ctx, BATCH);
    total.reset += r.reset;
    total.lifted += r.lifted;
    if (r.reset < BATCH) return total;
  }
}

/** The node's traffic as its view shows it (read only; the settings are beside it in the view). */
export interface NodeTrafficView {
  /** Raw bytes the node carried in its current quota period. */
  period_bytes: number;
  period_started_at: string;
  /** When the count starts over (the next period boundary, UTC); null for no_reset. */
  resets_at: string | null;
  /** Since when the node is limited by its quota (its inbounds out of service); null: it is not. */
  limited_since: string | null;
  /** All time: the raw bytes the node carried for subscriptions, and the bytes that charged them. */
  total_raw_bytes: number;
  total_charged_bytes: number;
}

export function nodeTrafficView(r: NodeRow): NodeTrafficView {
  const resets = nextPeriodStart(r.traffic_quota_renewal, r.traffic_period_started_at);
  return {
    period_bytes: Number(r.traffic_period_bytes),
    period_started_at: r.traffic_period_started_at.toISOString(),
    resets_at: resets?.toISOString() ?? null,
    limited_since: r.traffic_limited_at?.toISOString() ?? null,
    total_raw_bytes: Number(r.traffic_raw_bytes),
    total_charged_bytes: Number(r.traffic_charged_bytes),
  };
}
