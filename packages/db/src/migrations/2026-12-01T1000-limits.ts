import { type Kysely, sql } from 'kysely';

// Issue 36: limits the agent enforces on live connections, and entitlements it enforces while
// the control plane is away (docs/limits.md).
// - subscriptions and plans: device_limit (distinct client addresses; null: none), upload_bps
//   and download_bps (bits per second; null: uncapped). A plan's values reach a subscription
//   bought or renewed with it, as its traffic limit does.
// - nodes.enforcement: what the agent last said it enforces (StatusReport.enforcement, snake
//   case, with reported_at); null: it never said (an agent of an earlier release: enforces none).
// - nodes.last_cutoff_report_id: CutoffReport exactly once, as last_usage_report_id for usage.
// - traffic_slices: per (node, subscription) the traffic slice granted (slice_id from one
//   sequence, monotonic across the installation; slice_bytes in the node's raw bytes) and the raw
//   bytes the node reported for the user since (used_bytes).
// - node_cutoffs: users an agent cut on its own (time or slice), one row per report entry.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['subscriptions', 'plans']) {
    await db.schema
      .alterTable(table)
      .addColumn('device_limit', 'integer', (c) => c.check(sql`device_limit between 1 and 1000`))
      .addColumn('upload_bps', 'bigint', (c) => c.check(sql`upload_bps between 8000 and 100000000000`))
      .addColumn('download_bps', 'bigint', (c) => c.check(sql`download_bps between 8000 and 100000000000`))
      .execute();
  }
  await db.schema
    .alterTable('nodes')
    .addColumn('enforcement', 'jsonb')
    .addColumn('last_cutoff_report_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`create sequence traffic_slice_ids`.execute(db);
  await db.schema
    .createTable('traffic_slices')
    .addColumn('node_id', 'text', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
    .addColumn('slice_id', 'bigint', (c) => c.notNull())
    .addColumn('slice_bytes', 'bigint', (c) => c.notNull().check(sql`slice_bytes >= 0`))
    .addColumn('used_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('granted_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('traffic_slices_pkey', ['node_id', 'subscription_id'])
    .execute();
  await db.schema.createIndex('traffic_slices_subscription').on('traffic_slices').column('subscription_id').execute();
  await db.schema
    .createTable('node_cutoffs')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('node_id', 'text', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('report_id', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull().check(sql`reason in ('time', 'slice')`))
    .addColumn('cut_at', 'timestamptz', (c) => c.notNull())
    .addColumn('slice_id', 'bigint', (c) => c.notNull())
    .addColumn('slice_used_bytes', 'bigint', (c) => c.notNull())
    .addColumn('recorded_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('node_cutoffs_subscription').on('node_cutoffs').columns(['subscription_id', 'recorded_at']).execute();
  await db.schema.createIndex('node_cutoffs_node').on('node_cutoffs').columns(['node_id', 'recorded_at']).execute();
}
