import type { Kysely } from 'kysely';

// Issue 29 item 1, its last case: a password registration's confirmation link sets the chosen
// password only in the browser that registered (the SHA-256 of a random value kept in that
// browser's cookie). A stranger who registers someone else's address cannot click the link in
// the victim's mailbox, and the victim who clicks it in their own browser gets no stranger's
// password. Links issued before this migration bind no browser: they confirm without a password.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('magic_link_tokens').addColumn('browser_hash', 'text').execute();
}
