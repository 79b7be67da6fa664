import { sql } from 'kysely';
import { EXPIRING_SOON_DAYS, expiringWindow } from '../certificates/read-certificates.ts';
import { ValidationError } from '../errors.ts';
import { type RevenueLine, revenueOf } from '../payments/revenue.ts';
import type { DomainContext } from '../shared/context.ts';
import { effectiveStatusSql } from '../subscriptions/subscription-status.ts';

export const STATS_DEFAULT_PERIOD_MS = 24 * 60 * 60 * 1000;

export interface StatsOverviewQuery {
  from?: Date | undefined;
  to?: Date | undefined;
}

export interface StatsOverview {
  nodes: { total: number; online: number; offline: number; enabled: number; disabled: number };
  subscriptions: { total: number; active: number; limited: number; expired: number; disabled: number };
  traffic: { from: string; to: string; uplink_bytes: number; downlink_bytes: number; total_bytes: number };
  /** Certificates now: how many, how many have expired, and how many expire within 30 days. */
  certificates: {
    total: number;
    expired: number;
    expiring_within_30_days: number;
    next_expiry: string | null;
    /** ACME certificates whose last issuance or renewal failed (last_error set). */
    failing: number;
  };
  /** Payments paid in [from, to), per currency. */
  revenue: { from: string; to: string; by_currency: RevenueLine[] };
}

/**
 * Fleet and customer counts now, and traffic of the hourly usage rows with `hour` in
 * [from, to), and revenue of payments paid in [from, to) per currency. Defaults: `to` is now, `from` is 24 h before `to`.
 */
export async function statsOverview(ctx: Pick<DomainContext, 'db' | 'clock'>, q: StatsOverviewQuery): Promise<StatsOverview> {
  const to = q.to ?? ctx.clock.now();
  const from = q.from ?? new Date(to.getTime() - STATS_DEFAULT_PERIOD_MS);
  if (from.getTime() >= to.getTime()) throw new ValidationError('the period is empty', { from: 'must be before to' });

  const n = await ctx.db
    .selectFrom('nodes')
    .select([
      sql<number>`count(*)`.as('total'),
      sql<number>`count(*) filter (where connectivity = 'online')`.as('online'),
      sql<number>`count(*) filter (where admin_status = 'enabled')`.as('enabled'),
    ])
    .executeTakeFirstOrThrow();
  // Counted by the status rule as of now, like the subscription list and views.
  const status = effectiveStatusSql(ctx.clock.now());
  const s = await ctx.db
    .selectFrom('subscriptions')
    .select([status.as('status'), sql<number>`count(*)`.as('n')])
    .groupBy(sql`1`)
    .execute();
  const t = await ctx.db
    .selectFrom('usage_hourly')
    .select([sql<string>`coalesce(sum(uplink_bytes), 0)`.as('up'), sql<string>`coalesce(sum(downlink_bytes), 0)`.as('down')])
    .where('hour', '>=', from)
    .where('hour', '<', to)
    .executeTakeFirstOrThrow();
  const revenue = await revenueOf(ctx, from, to);
  const nowMs = ctx.clock.now().getTime();
  const soon = expiringWindow(new Date(nowMs), EXPIRING_SOON_DAYS);
  const c = await ctx.db
    .selectFrom('certificates')
    .select([
      sql<number>`count(*)`.as('total'),
      sql<number>`count(*) filter (where not_after <= ${new Date(nowMs)})`.as('expired'),
      sql<number>`count(*) filter (where not_after > ${soon.after} and not_after <= ${soon.until})`.as('soon'),
      sql<Date | null>`min(not_after) filter (where not_after > ${new Date(nowMs)})`.as('next'),
      sql<number>`count(*) filter (where last_error is not null)`.as('failing'),
    ])
    .executeTakeFirstOrThrow();

  const nodesTotal = Number(n.total);
  const byStatus = { active: 0, limited: 0, expired: 0, disabled: 0 };
  for (const r of s) byStatus[r.status] = Number(r.n);
  const up = Number(t.up);
  const down = Number(t.down);
  return {
    nodes: {
      total: nodesTotal,
      online: Number(n.online),
      offline: nodesTotal - Number(n.online),
      enabled: Number(n.enabled),
      disabled: nodesTotal - Number(n.enabled),
    },
    subscriptions: { total: s.reduce((a, r) => a + Number(r.n), 0), ...byStatus },
    traffic: { from: from.toISOString(), to: to.toISOString(), uplink_bytes: up, downlink_bytes: down, total_bytes: up + down },
    certificates: {
      total: Number(c.total),
      expired: Number(c.expired),
      expiring_within_30_days: Number(c.soon),
      next_expiry: c.next ? new Date(c.next).toISOString() : null,
      failing: Number(c.failing),
    },
    revenue: { from: from.toISOString(), to: to.toISOString(), by_currency: revenue },
  };
}
