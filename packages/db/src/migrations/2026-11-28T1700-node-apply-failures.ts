import { type Kysely, sql } from 'kysely';

// Issue 28 item 2. The engine version a node's desired state is compiled for (its capabilities:
// packages/domain/src/agents/engine-capabilities.ts; null: not reported yet, compiled for current
// Xray), and a failed apply kept until a later revision applies: which revision failed and since
// when the node has not run its desired state. A failure recorded before (last_apply_error is
// "revision N: <the engine's words>") gets its revision and time. Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('nodes')
    .addColumn('compiled_engine_version', 'text')
    .addColumn('apply_failed_revision', 'int8')
    .addColumn('apply_failing_since', 'timestamptz')
    .execute();
  await sql`
    update nodes
       set apply_failed_revision = substring(last_apply_error from '^revision ([0-9]{1,18}):')::int8,
           apply_failing_since = coalesce(last_apply_at, updated_at)
     where last_apply_error is not null`.execute(db);
}
