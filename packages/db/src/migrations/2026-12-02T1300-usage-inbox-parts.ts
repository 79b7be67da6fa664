import { type Kysely, sql } from 'kysely';

// Issue 37.1: a staged report is split by subscription into parts (`part`, 0-15: a hash of the
// subscription id, the same part for a subscription in every report), one usage_inbox row per
// part with entries. The fold takes a node's part with everything staged in it: a subscription
// reported again and again while folds were busy is summed and written once, and a fold's
// transaction holds the rows of one part's subscriptions, not of a whole node's.
// Rows staged before this migration are part 0: folded like any other.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('usage_inbox')
    .addColumn('part', 'smallint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`alter table usage_inbox alter column part drop default`.execute(db);
  await db.schema.alterTable('usage_inbox').dropConstraint('usage_inbox_pk').execute();
  await db.schema.alterTable('usage_inbox').addPrimaryKeyConstraint('usage_inbox_pk', ['node_id', 'part', 'report_id']).execute();
  await sql`alter table usage_inbox add constraint usage_inbox_part check (part between 0 and 15)`.execute(db);
}
