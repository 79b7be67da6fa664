import type { Kysely } from 'kysely';
import { sql } from 'kysely';

// The installation's internal CA for agent identities (one row). Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('certificate_authority')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('cert_pem', 'text', (c) => c.notNull())
    .addColumn('key_enc', 'text', (c) => c.notNull())
    .addColumn('not_after', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
}
