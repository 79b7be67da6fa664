import { type Kysely, sql } from 'kysely';

// Issue 37.1: the usage ingest rewrites a subscription's counters (used_bytes, period_*_bytes,
// lifetime_used_bytes) for every entry of every report. PostgreSQL rewrites a row in place
// (a HOT update: no new index entries, a fraction of the WAL) only when no index covers a
// column the update changes; subscriptions_used_order (used_bytes, id), added for the list's
// sort by traffic (2026-11-29T1600-list-search), made every credit a full update with a new
// entry in each of the table's ten indexes: HOT updates 84% -> 0%, WAL 3.7 -> 8.8 MiB a report
// of 5,000 entries (bench/BENCHMARKS.md). The sort by traffic reads the filtered rows instead
// (a top-N sort; docs/scale.md).
// subscriptions_first_use: the terms that start on first use and have not yet, for the ingest's
// look-up of the terms a report starts (it read the whole table for it: 18 ms a report at 50,000
// subscriptions). Its predicate column only changes when a term starts, so credits stay HOT.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists subscriptions_used_order`.execute(db);
  await sql`create index subscriptions_first_use on subscriptions (id) where starts_on_first_use_seconds is not null`.execute(db);
}
