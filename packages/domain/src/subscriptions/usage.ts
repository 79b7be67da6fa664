import { NotFoundError, ValidationError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';

export type UsageGranularity = 'hour' | 'day';

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
const UNIT: Record<UsageGranularity, number> = { hour: HOUR, day: DAY };
/** Longest range per granularity: 31 days of hours (744 points), 366 days of days. */
export const USAGE_MAX_RANGE_MS: Record<UsageGranularity, number> = { hour: 31 * DAY, day: 366 * DAY };
const DEFAULT_RANGE_MS: Record<UsageGranularity, number> = { hour: DAY, day: 30 * DAY };

/**
 * Traffic of one subscription summed over its nodes, per UTC hour or day. `to` defaults to
 * now and `from` to one day (hour) or 30 days (day) before it; `from` is rounded down and
 * `to` up to the granularity, and every bucket in between is present (zero when idle).
 */
export async function getSubscriptionUsage(ctx: Pick<DomainContext, 'db' | 'clock'>, id: string, query: UsageQuery): Promise<UsageView> {
  const granularity = query.granularity ?? 'hour';
  const unit = UNIT[granularity];
  const to = query.to ?? ctx.clock.now();
  const from = query.from ?? new Date(to.getTime() - DEFAULT_RANGE_MS[granularity]);
  if (from.getTime() >= to.getTime()) throw new ValidationError('from must be before to', { 'query.from': 'must be before to' });
  if (to.getTime() - from.getTime() > USAGE_MAX_RANGE_MS[granularity]) {
    const days = USAGE_MAX_RANGE_MS[granularity] / DAY;
    throw new ValidationError(`at most ${days} days at ${granularity} granularity`, {
      'query.to': `at most ${days} days after from at ${granularity} granularity`,
    });
  }
  const start = Math.floor(from.getTime() / unit) * unit;
  const end = Math.ceil(to.getTime() / unit) * unit;

  const exists = await ctx.db.selectFrom('subscriptions').select('id').where('id', '=', id).executeTakeFirst();
  if (!exists) throw new NotFoundError('subscription', id);
  const rows = await ctx.db
    .selectFrom('usage_hourly')
    .select((eb) => ['hour', eb.fn.sum<number | string>('uplink_bytes').as('up'), eb.fn.sum<number | string>('downlink_bytes').as('down')])
    .where('subscription_id', '=', id)
    .where('hour', '>=', new Date(start))
    .where('hour', '<', new Date(end))
    .groupBy('hour')
    .execute();

  const buckets = new Map<number, { up: number; down: number }>();
  for (let t = start; t < end; t += unit) buckets.set(t, { up: 0, down: 0 });
  for (const r of rows) {
    const b = buckets.get(Math.floor(r.hour.getTime() / unit) * unit);
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
