import { type Kysely, sql } from 'kysely';

// Usage ingestion rewrites subscriptions.used_bytes and usage_hourly counters for thousands
// of rows per report. With free space on each page PostgreSQL updates them in place (HOT: no
// new index entries); measured 2.5x faster at 5,000 entries per report (bench/BENCHMARKS.md).
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table subscriptions set (fillfactor = 80)`.execute(db);
  await sql`alter table usage_hourly set (fillfactor = 80)`.execute(db);
}
