import { sql } from 'kysely';
import { NotFoundError, ValidationError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';

export type UsageGranularity = 'hour' | 'day' | 'month';

export interface UsageQuery {
  from?: Date | undefined;
  to?: Date | undefined;
  granularity?: UsageGranularity | undefined;
}

export interface UsageView {
  subscription_id: string;
  granularity: UsageGranularity;
  from: string;
  to: string;
  items: Array<{ start: string; uplink_bytes: number; downlink_bytes: number }>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Longest range per granularity: 31 days of hours (744 points), 366 days of days, 10 years of months. */
export const USAGE_MAX_RANGE_MS: Record<UsageGranularity, number> = { hour: 31 * DAY, day: 366 * DAY, month: 3653 * DAY };
const DEFAULT_RANGE_MS: Record<UsageGranularity, number> = { hour: DAY, day: 30 * DAY, month: 365 * DAY };

/** Start of the UTC hour, day or calendar month holding `t` (ms). */
export function usageBucketStart(granularity: UsageGranularity, t: number): number {
  if (granularity === 'hour') return Math.floor(t / HOUR) * HOUR;
  if (granularity === 'day') return Math.floor(t / DAY) * DAY;
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** Start of the bucket after the one starting at `start` (months have 28 to 31 days). */
export function nextUsageBucket(granularity: UsageGranularity, start: number): number {
  if (granularity === 'hour') return start + HOUR;
  if (granularity === 'day') return start + DAY;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/**
 * Traffic of one subscription summed over its nodes, per UTC hour, day or calendar month.
 * `to` defaults to now and `from` to one day (hour), 30 days (day) or 365 days (month) before
 * it; `from` is rounded down and `to` up to the granularity, and every bucket in between is
 * present (zero when idle).
 */
export async function getSubscriptionUsage(ctx: Pick<DomainContext, 'db' | 'clock'>, id: string, query: UsageQuery): Promise<UsageView> {
  const granularity = query.granularity ?? 'hour';
  const to = query.to ?? ctx.clock.now();
  const from = query.from ?? new Date(to.getTime() - DEFAULT_RANGE_MS[granularity]);
  if (from.getTime() >= to.getTime()) throw new ValidationError('from must be before to', { 'query.from': 'must be before to' });
  if (to.getTime() - from.getTime() > USAGE_MAX_RANGE_MS[granularity]) {
    const days = USAGE_MAX_RANGE_MS[granularity] / DAY;
    throw new ValidationError(`at most ${days} days at ${granularity} granularity`, {
      'query.to': `at most ${days} days after from at ${granularity} granularity`,
    });
  }
  const start = usageBucketStart(granularity, from.getTime());
  const last = usageBucketStart(granularity, to.getTime());
  const end = last === to.getTime() ? last : nextUsageBucket(granularity, last);

  const exists = await ctx.db.selectFrom('subscriptions').select('id').where('id', '=', id).executeTakeFirst();
  if (!exists) throw new NotFoundError('subscription', id);
  // Summed per bucket in SQL (a year of months is 12 rows, not 8,760 hours); the UTC
  // truncation matches usageBucketStart.
  const bucket = sql<Date>`date_trunc(${granularity}, ${sql.ref('hour')}, 'UTC')`;
  const rows = await ctx.db
    .selectFrom('usage_hourly')
    .select((eb) => [
      bucket.as('hour'),
      eb.fn.sum<number | string>('uplink_bytes').as('up'),
      eb.fn.sum<number | string>('downlink_bytes').as('down'),
    ])
    .where('subscription_id', '=', id)
    .where('hour', '>=', new Date(start))
    .where('hour', '<', new Date(end))
    .groupBy(sql`1`)
    .execute();

  const buckets = new Map<number, { up: number; down: number }>();
  for (let t = start; t < end; t = nextUsageBucket(granularity, t)) buckets.set(t, { up: 0, down: 0 });
  for (const r of rows) {
    const b = buckets.get(usageBucketStart(granularity, r.hour.getTime()));
    if (!b) continue;
    // sum(bigint) is numeric: a string from pg, a number or string from PGlite.
    b.up += Number(r.up);
    b.down += Number(r.down);
  }
  return {
    subscription_id: id,
    granularity,
    from: new Date(start).toISOString(),
    to: new Date(end).toISOString(),
    items: [...buckets].map(([t, b]) => ({ start: new Date(t).toISOString(), uplink_bytes: b.up, downlink_bytes: b.down })),
  };
}

/** One node's part of a subscription's traffic: charged (what the subscription was counted) and raw (what the node carried). */
export interface SubscriptionNodeUsage {
  node_id: string;
  node_name: string;
  /** Charged: the raw bytes times the node's traffic multiplier when they were reported. */
  uplink_bytes: number;
  downlink_bytes: number;
  /** What the node reported. */
  raw_uplink_bytes: number;
  raw_downlink_bytes: number;
}

/**
 * Traffic of one subscription in [from, to), summed per node (with the node's name): who used
 * which node (GET /subscriptions/{id}/usage/nodes), and an old panel's per-node usage answer
 * (Marzban's /sub/{token}/usage). Nodes deleted since are left out (their rows went with them).
 * Hourly rows from before multipliers hold no raw bytes: theirs are the charged ones.
 */
export async function getSubscriptionUsageByNode(
  ctx: Pick<DomainContext, 'db'>,
  id: string,
  from: Date,
  to: Date,
): Promise<SubscriptionNodeUsage[]> {
  if (from.getTime() > to.getTime()) throw new ValidationError('from must not be after to', { 'query.from': 'must not be after to' });
  const exists = await ctx.db.selectFrom('subscriptions').select('id').where('id', '=', id).executeTakeFirst();
  if (!exists) throw new NotFoundError('subscription', id);
  const rows = await ctx.db
    .selectFrom('usage_hourly as u')
    .innerJoin('nodes as n', 'n.id', 'u.node_id')
    .select((eb) => [
      'u.node_id',
      'n.name',
      eb.fn.sum<number | string>('u.uplink_bytes').as('up'),
      eb.fn.sum<number | string>('u.downlink_bytes').as('down'),
      sql<number | string>`sum(coalesce(u.raw_uplink_bytes, u.uplink_bytes))`.as('raw_up'),
      sql<number | string>`sum(coalesce(u.raw_downlink_bytes, u.downlink_bytes))`.as('raw_down'),
    ])
    .where('u.subscription_id', '=', id)
    .where('u.hour', '>=', from)
    .where('u.hour', '<', to)
    .groupBy(['u.node_id', 'n.name'])
    .orderBy('n.name')
    .execute();
  return rows.map((r) => ({
    node_id: r.node_id,
    node_name: r.name,
    uplink_bytes: Number(r.up),
    downlink_bytes: Number(r.down),
    raw_uplink_bytes: Number(r.raw_up),
    raw_downlink_bytes: Number(r.raw_down),
  }));
}
