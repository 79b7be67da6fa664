import { type Kysely, sql } from 'kysely';

// Issue 37.1: a subscription's traffic counters (used_bytes, period_uplink_bytes,
// period_downlink_bytes, lifetime_used_bytes) move out of the subscription row into a narrow
// row of their own, subscription_counters, one per subscription. The usage ingest rewrites
// these counters for every subscription a report names, and PostgreSQL writes a whole new row
// version for an update: the subscription row is ~400 B on pages holding ~15 rows, the
// counters row ~90 B on pages holding ~65. Measured at 1,000,000 subscriptions (shared_buffers
// 128 MB, batches of 30,000 distinct ids): the update of the subscription rows 19,500-20,500
// rows/s and 2.6 KiB of WAL a row (full-page images of pages that no longer fit in memory);
// of the counters rows 89,000-97,000 rows/s and ~400 B (bench/BENCHMARKS.md, 2026-11-30).
// Every subscription has its counters row from its insert on: one statement trigger after an
// insert into subscriptions adds the rows of the inserted subscriptions (whatever inserted
// them: the domain, an import, a restore), and the foreign key's cascade removes them with it.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table subscription_counters (
      subscription_id text primary key references subscriptions (id) on delete cascade,
      used_bytes bigint not null default 0,
      period_uplink_bytes bigint not null default 0,
      period_downlink_bytes bigint not null default 0,
      lifetime_used_bytes bigint not null default 0
    ) with (fillfactor = 80)`.execute(db);
  await sql`
    insert into subscription_counters (subscription_id, used_bytes, period_uplink_bytes, period_downlink_bytes, lifetime_used_bytes)
    select id, used_bytes, period_uplink_bytes, period_downlink_bytes, lifetime_used_bytes from subscriptions`.execute(db);
  await sql`
    alter table subscriptions drop column used_bytes, drop column period_uplink_bytes,
      drop column period_downlink_bytes, drop column lifetime_used_bytes`.execute(db);
  await sql`
    create function subscription_counters_of_inserted_subscriptions() returns trigger language plpgsql as $$
    begin
      insert into subscription_counters (subscription_id) select id from inserted_subscriptions;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger subscriptions_inserted_add_counters
      after insert on subscriptions referencing new table as inserted_subscriptions
      for each statement execute function subscription_counters_of_inserted_subscriptions()`.execute(db);
}
