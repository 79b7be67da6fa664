import { type Kysely, sql } from 'kysely';

// Issue 37.1: the usage credit reads, for each subscription a report names, what it judges the
// credit by (client, renewal, status, traffic limit, a term waiting for its first use). Since the
// counters left the row (2026-12-02T1400) a subscription row changes only on an edit, so its
// pages stay all-visible and this index answers that read alone (an index-only scan): no visit
// to a ~400 B heap row per entry, most of which are not in shared_buffers at a million
// subscriptions (a fold of 5,000 entries over 1,000,000 subscriptions: 132-135 ms against
// 198-200, bench/BENCHMARKS.md). An edit of one of these columns is not a HOT update; edits are
// rare, credits are not.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index subscriptions_credit on subscriptions (id)
              include (client_id, renewal, status, traffic_limit_bytes, starts_on_first_use_seconds)`.execute(db);
}
