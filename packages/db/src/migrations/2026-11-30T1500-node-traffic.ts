import { type Kysely, sql } from 'kysely';

// Issue 35.4: a node's traffic multiplier and its traffic quota.
// - traffic_multiplier scales what the node's usage charges to subscriptions (0 to 100, four
//   decimals, exact: numeric); usage_hourly keeps the raw bytes beside the charged ones. Rows
//   written before have no raw columns filled (null): every node charged 1 to 1 then, so the
//   raw bytes are the charged ones. Left null rather than backfilled: a backfill would rewrite
//   every hourly row of the installation at upgrade time.
// - traffic_quota_bytes per traffic_quota_renewal period (null: none) over the raw bytes the
//   node carried in the period (traffic_period_bytes since traffic_period_started_at); a node
//   that reaches it is limited (traffic_limited_at) until the period resets or the quota rises.
// - traffic_raw_bytes / traffic_charged_bytes: what the node carried and what it charged, all
//   time. Backfilled from the hourly rows (one aggregate read), the period from this month's.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('nodes')
    .addColumn('traffic_multiplier', sql`numeric(7, 4)`, (c) =>
      c.notNull().defaultTo(1).check(sql`traffic_multiplier >= 0 and traffic_multiplier <= 100`),
    )
    .addColumn('traffic_quota_bytes', 'bigint', (c) => c.check(sql`traffic_quota_bytes >= 0`))
    .addColumn('traffic_quota_renewal', 'text', (c) =>
      c.notNull().defaultTo('month').check(sql`traffic_quota_renewal in ('no_reset', 'day', 'week', 'month')`),
    )
    .addColumn('traffic_period_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('traffic_period_started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`date_trunc('month', now(), 'UTC')`))
    .addColumn('traffic_limited_at', 'timestamptz')
    .addColumn('traffic_raw_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('traffic_charged_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('usage_hourly').addColumn('raw_uplink_bytes', 'bigint').addColumn('raw_downlink_bytes', 'bigint').execute();
  await sql`
    update nodes n
       set traffic_raw_bytes = t.total, traffic_charged_bytes = t.total, traffic_period_bytes = t.period
      from (select u.node_id,
                   sum(u.uplink_bytes + u.downlink_bytes) as total,
                   coalesce(sum(u.uplink_bytes + u.downlink_bytes) filter (where u.hour >= date_trunc('month', now(), 'UTC')), 0) as period
              from usage_hourly u
             group by u.node_id) t
     where t.node_id = n.id`.execute(db);
}
