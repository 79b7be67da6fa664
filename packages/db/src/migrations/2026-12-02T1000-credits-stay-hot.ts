import { type Kysely, sql } from 'kysely';

// Issue 37.1: the usage ingest rewrites a subscription's counters (used_bytes, period_*_bytes,
// lifetime_used_bytes) for every entry of every report. PostgreSQL rewrites a row in place
// (a HOT update: no new index entries, a fraction of the WAL) only when no index covers a
// column the update changes; subscriptions_used_order (used_bytes, id), added for the list's
// sort by traffic (2026-11-29T1600-list-search), made every credit a full update with a new
// entry in each of the table's ten indexes: HOT updates 84% -> 0%, WAL 3.7 -> 8.8 MiB a report
// of 5,000 entries (bench/BENCHMARKS.md). The sort by traffic reads the filtered rows instead
// (a top-N sort; docs/scale.md). Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists subscriptions_used_order`.execute(db);
}
