import type { Kysely } from 'kysely';

// Issue 29 item 3. An OAuth request is bound to the browser that started it: the SHA-256 of the
// random value kept in that browser's cookie (the callback refuses without it), and, for a link
// from settings, the session that asked (the callback links only while that session is live).
// Requests started before this migration have neither, and their callbacks are refused: they
// expire within 10 minutes anyway. Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_requests').addColumn('browser_hash', 'text').addColumn('link_session_id', 'text').execute();
}
