import { type Kysely, sql } from 'kysely';

// Issue 34: an import an admin starts by uploading the old panel's SQLite file runs as a job in
// the worker (whichever process takes it), with its progress and report kept here for the panel.
// The file is held until the job ends (then dropped), so a retried job reads it again.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('import_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('marzban', 'marzneshin', '3x-ui', 'remnawave')`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'running', 'done', 'failed')`))
    // The import's options as the admin gave them (source name, nodes, certificate, dry run, ...).
    .addColumn('options', 'jsonb', (c) => c.notNull())
    .addColumn('source_file', 'bytea')
    .addColumn('xray_config', 'text')
    .addColumn('file_bytes', 'bigint', (c) => c.notNull())
    // Where it is: { phase: 'queued' | 'reading' | 'importing' | 'done', done, total }.
    .addColumn('progress', 'jsonb', (c) => c.notNull())
    .addColumn('report', 'jsonb')
    .addColumn('error', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('import_jobs_created').on('import_jobs').column('created_at').execute();
}
