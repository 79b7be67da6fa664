import { type Kysely, sql } from 'kysely';

// Issue 37.1: usage reports staged, folded later. A report's transaction writes one row here
// (its summed entries as three arrays) and moves the node's last report id: exactly once per
// report id as before, at one row write a report instead of two an entry. The fold
// (agents/usage-fold.ts) takes the staged rows, sums each subscription's entries of a node and
// hour, credits them with the ingest's one crediting statement and deletes the rows it folded,
// in one transaction; a subscription reported by several staged reports is written once.
//   multiplier: the node's traffic multiplier when the report arrived (charged at it).
//   entries: how many ids the row holds (the fold's batch size and the gateway's backpressure).
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('usage_inbox')
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('report_id', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .addColumn('multiplier', 'numeric', (c) => c.notNull())
    .addColumn('entries', 'integer', (c) => c.notNull())
    .addColumn('ids', sql`text[]`, (c) => c.notNull())
    .addColumn('uplink', sql`bigint[]`, (c) => c.notNull())
    .addColumn('downlink', sql`bigint[]`, (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_inbox_pk', ['node_id', 'report_id'])
    .execute();
  await db.schema.createIndex('usage_inbox_received').on('usage_inbox').column('received_at').execute();
}
