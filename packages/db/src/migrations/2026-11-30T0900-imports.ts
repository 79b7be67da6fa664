import { type Kysely, sql } from 'kysely';

// Issue 34: moving in from other panels. What was imported from where (a re-import updates,
// never duplicates), the secret that verifies the source's old subscription links, and which
// of our subscriptions each source user became (the key its old links are looked up by).
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  const ts = (c: any) => c.notNull();
  await db.schema
    .createTable('import_sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('marzban', 'marzneshin', '3x-ui', 'remnawave')`))
    // The operator's name for the source ("marzban", "old-panel"): one row per name.
    .addColumn('name', 'text', (c) => c.notNull().unique())
    // Sealed with the installation key: Marzban's jwt.secret_key, which signed its links.
    .addColumn('link_secret_enc', 'text')
    .addColumn('source_version', 'text')
    .addColumn('first_imported_at', 'timestamptz', ts)
    .addColumn('last_imported_at', 'timestamptz', ts)
    // Old links answered: when nobody uses them any more, the old host can go.
    .addColumn('legacy_hits', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_legacy_hit_at', 'timestamptz')
    .execute();
  await db.schema
    .createTable('imported_users')
    .addColumn('source_id', 'text', (c) => c.notNull().references('import_sources.id').onDelete('cascade'))
    // The source's identity of the user (Marzban: the username, lower-cased).
    .addColumn('source_key', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
    .addColumn('source_created_at', 'timestamptz', ts)
    // Tokens the source minted before this no longer opened the link there.
    .addColumn('links_revoked_at', 'timestamptz')
    // Our subscription's link was rotated since the import: its old links stop too.
    .addColumn('links_retired_at', 'timestamptz')
    .addColumn('imported_at', 'timestamptz', ts)
    .addPrimaryKeyConstraint('imported_users_pk', ['source_id', 'source_key'])
    .execute();
  await db.schema.createIndex('imported_users_subscription').on('imported_users').column('subscription_id').execute();
  await db.schema
    .createTable('imported_inbounds')
    .addColumn('source_id', 'text', (c) => c.notNull().references('import_sources.id').onDelete('cascade'))
    .addColumn('tag', 'text', (c) => c.notNull())
    // The access group that stands for the source inbound: its users' subscriptions are in it.
    .addColumn('access_group_id', 'text', (c) => c.notNull().references('access_groups.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('imported_inbounds_pk', ['source_id', 'tag'])
    .execute();
}
