import type { Kysely } from 'kysely';

// The agent gateway's state (issue 4). Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('nodes')
    // Which gateway replica holds the node's Sync stream, and which stream: a stream that ends
    // sets the node offline only if it is still the current one.
    .addColumn('stream_replica', 'text')
    .addColumn('stream_session', 'text')
    .addColumn('stream_opened_at', 'timestamptz')
    // The node's client certificate: only the current serial (and, during a renewal, the one it
    // replaces) may open a stream, so re-enrolling a node retires its old identity.
    .addColumn('cert_serial', 'text')
    .addColumn('cert_previous_serial', 'text')
    .addColumn('cert_not_after', 'timestamptz')
    .addColumn('last_status_at', 'timestamptz')
    .addColumn('last_apply_at', 'timestamptz')
    // Usage entries for subscriptions that no longer exist, dropped and counted (never a failed report).
    .addColumn('usage_entries_dropped', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('nodes_stream_replica').on('nodes').column('stream_replica').execute();

  // Gateway replicas alive: each refreshes its row; streams of a replica that stopped refreshing
  // (crashed, partitioned) are set offline by the survivors.
  await db.schema
    .createTable('gateway_replicas')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('heartbeat_at', 'timestamptz', (c) => c.notNull())
    .execute();
}
