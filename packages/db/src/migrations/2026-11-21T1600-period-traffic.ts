import { type Kysely, sql } from 'kysely';

// This period's traffic by direction on the subscription row, kept by the usage ingest next
// to used_bytes: GET /sub/{token} shows it on every app refresh, and summing a month of hourly
// rows per node per request grows with the period. Backfilled from the hourly rows.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('subscriptions')
    .addColumn('period_uplink_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('period_downlink_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`
    update subscriptions s
       set period_uplink_bytes = t.up, period_downlink_bytes = t.down
      from (select u.subscription_id, sum(u.uplink_bytes) as up, sum(u.downlink_bytes) as down
              from usage_hourly u join subscriptions s2 on s2.id = u.subscription_id
             where u.hour >= date_trunc('hour', s2.period_started_at, 'UTC')
             group by u.subscription_id) t
     where t.subscription_id = s.id`.execute(db);
}
