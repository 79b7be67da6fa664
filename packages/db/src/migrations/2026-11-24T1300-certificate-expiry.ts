import type { Kysely } from 'kysely';

// Uploaded certificates announced before they expire (issue 16 item 4): the not_after an
// announcement was made for, so new material (another not_after) is announced again and the
// same one never twice. Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('certificates').addColumn('expiry_announced_for', 'timestamptz').execute();
}
