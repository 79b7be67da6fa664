import { type Kysely, sql } from 'kysely';

// Issue 30 item 6: the list screens search (`q`) and sort on the server. Substring search of
// emails and notes uses pg_trgm's GIN indexes when the extension can be created (PostgreSQL
// ships it and marks it trusted; the embedded database loads it, packages/db PGLITE_EXTENSIONS);
// where it cannot (a managed database that refuses it), the same queries answer without them,
// only slower. The extension goes to `public` when that schema exists, so dropping one schema
// of a shared database never takes the operator classes away from another. Short queries
// (under 3 characters) and id prefixes match by prefix: text_pattern_ops indexes serve them in
// any collation. The sort keys of the list routes get (key, id) indexes for their keyset pages.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  const trgm = await trigramSchema(db);
  if (trgm) {
    const ops = sql.raw(`${quoteIdent(trgm)}.gin_trgm_ops`);
    await sql`create index clients_email_trgm on clients using gin (email ${ops})`.execute(db);
    await sql`create index clients_note_trgm on clients using gin (note ${ops})`.execute(db);
    await sql`create index subscriptions_note_trgm on subscriptions using gin (note ${ops})`.execute(db);
  }
  await sql`create index clients_email_prefix on clients (email text_pattern_ops)`.execute(db);
  await sql`create index clients_id_prefix on clients (id text_pattern_ops)`.execute(db);
  await sql`create index subscriptions_id_prefix on subscriptions (id text_pattern_ops)`.execute(db);
  await sql`create index payments_id_prefix on payments (id text_pattern_ops)`.execute(db);
  await sql`create index payments_provider_payment_id on payments (provider_payment_id)`.execute(db);
  // Sort keys: expiry (never expiring last), this period's traffic, the client's email.
  await sql`create index subscriptions_expiry_order on subscriptions ((coalesce(expires_at, '9999-12-31T00:00:00Z'::timestamptz)), id)`.execute(
    db,
  );
  await sql`create index subscriptions_used_order on subscriptions (used_bytes, id)`.execute(db);
  await sql`create index clients_email_order on clients (email, id)`.execute(db);
  await sql`create index payments_amount_order on payments (amount, id)`.execute(db);
  await sql`create index audit_log_action on audit_log (action text_pattern_ops, id)`.execute(db);
  await sql`create index audit_log_entity_id on audit_log (entity_id)`.execute(db);
}

/** The schema pg_trgm lives in once created (or already was), or null when it cannot be. */
async function trigramSchema(db: Kysely<any>): Promise<string | null> {
  const found = async () =>
    (
      await sql<{
        schema: string;
      }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(
        db,
      )
    ).rows[0]?.schema ?? null;
  const existing = await found();
  if (existing) return existing;
  const available = await sql`select 1 from pg_available_extensions where name = 'pg_trgm'`.execute(db);
  if (available.rows.length === 0) return null;
  const hasPublic = (await sql`select 1 from pg_namespace where nspname = 'public'`.execute(db)).rows.length > 0;
  // Inside the migration's transaction: a refusal rolls back to here and nothing else.
  await sql`savepoint list_search_trgm`.execute(db);
  try {
    await sql.raw(`create extension if not exists pg_trgm${hasPublic ? ' with schema public' : ''}`).execute(db);
    await sql`release savepoint list_search_trgm`.execute(db);
  } catch {
    await sql`rollback to savepoint list_search_trgm`.execute(db);
    return null;
  }
  return found();
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
