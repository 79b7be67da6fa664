import { type Kysely, sql } from 'kysely';

// Operator settings edited at run time through the admin API, one JSON document per key
// (e.g. `subscription_link`: the User-Agent rules and headers of GET /sub/{token}). A key
// without a row means the built-in defaults. Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'jsonb', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}
