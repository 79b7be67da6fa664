import { type Kysely, sql } from 'kysely';

// Issue 34: panels whose subscription links name the user directly (3x-ui's subId, Remnawave's
// short uuid, Marzneshin's username/key): the key an old link is looked up by, one per source.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('imported_users').addColumn('link_key', 'text').execute();
  await db.schema
    .createIndex('imported_users_link_key')
    .on('imported_users')
    .columns(['link_key', 'source_id'])
    .unique()
    .where(sql.ref('link_key'), 'is not', null)
    .execute();
}
