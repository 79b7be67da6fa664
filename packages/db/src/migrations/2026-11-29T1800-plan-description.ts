import type { Kysely } from 'kysely';

// Issue 32 item 4: what a plan includes, in the operator's words, for the portal's plan cards
// (plain text, at most 1000 characters; null: none). Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('plans').addColumn('description', 'text').execute();
}
