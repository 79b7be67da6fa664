import { type Kysely, sql } from 'kysely';

// Issue 37.2: the gateway's member cache compares a big access group by a digest per bucket (count
// and sum of member_hash, packages/desired-state read-members.ts) at every snapshot of a node of
// that group: the one statement of a one-user change that reads every member. It joined the group's
// memberships to their subscriptions by a hash of 100,000 subscription rows (~140 ms serial on the
// session's machine, more with parallel workers). With `subscriptions_member_digest` (the id with
// what the digest reads of the row) and memberships in (group, subscription) order, it is a merge
// join of two index-only scans: ~64 ms (PostgreSQL 15, 100,000 members, 2026-12-01). The second
// index replaces `subscription_access_groups_group` (group only): a superset, one index to write.
// A subscription row changes only on an edit (its counters live in subscription_counters), so the
// one more index entry is written rarely.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index subscriptions_member_digest on subscriptions (id) include (status, client_id, bucket, member_hash)`.execute(db);
  await sql`create index subscription_access_groups_group_member on subscription_access_groups (access_group_id, subscription_id)`.execute(
    db,
  );
  await sql`drop index subscription_access_groups_group`.execute(db);
}
