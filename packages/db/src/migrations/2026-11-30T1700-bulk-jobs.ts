import type { Kysely } from 'kysely';

// Issue 35.3, bulk actions: a job over subscriptions (or clients) chosen by ids or by a list
// filter. The chosen ids are written down when the job is made (bulk_job_items), each marked done
// in the transaction that changes it, so a job resumed after a crash applies nothing twice; the
// nodes its changes reach are gathered (bulk_job_nodes) and get one new revision when the last
// item is done, not one per subscription.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('bulk_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // subscriptions | clients
    .addColumn('target', 'text', (c) => c.notNull())
    // {type: "extend_expiry", days: 30} ...
    .addColumn('action', 'jsonb', (c) => c.notNull())
    // How the items were chosen: {ids: [...]} or {filter: {...}}.
    .addColumn('selection', 'jsonb', (c) => c.notNull())
    // queued | running | done | failed
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('done', 'integer', (c) => c.notNull().defaultTo(0))
    // Items the action could not apply (deleted meanwhile, or a transition the state refuses), counted and skipped.
    .addColumn('skipped', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_by_token', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('bulk_jobs_status').on('bulk_jobs').columns(['status', 'updated_at']).execute();
  await db.schema
    .createTable('bulk_job_items')
    .addColumn('job_id', 'text', (c) => c.notNull().references('bulk_jobs.id').onDelete('cascade'))
    .addColumn('subject_id', 'text', (c) => c.notNull())
    // null: still to do; the time it was applied (or skipped)
    .addColumn('done_at', 'timestamptz')
    .addColumn('skipped', 'boolean', (c) => c.notNull().defaultTo(false))
    .addPrimaryKeyConstraint('bulk_job_items_pkey', ['job_id', 'subject_id'])
    .execute();
  await db.schema
    .createTable('bulk_job_nodes')
    .addColumn('job_id', 'text', (c) => c.notNull().references('bulk_jobs.id').onDelete('cascade'))
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bulk_job_nodes_pkey', ['job_id', 'node_id'])
    .execute();
}
