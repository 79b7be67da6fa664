import { type Kysely, sql } from 'kysely';

// Issue 35.2, the whole event catalogue. node.online / node.offline are raised on what was last
// announced, not on every stream that ends (an agent reconnecting within the grace raises
// nothing); node.certificate_served when a node applied the revision that carried a
// certificate's new material: one row per certificate and node until then.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('nodes')
    .addColumn('presence_announced', 'text', (c) => c.check(sql`presence_announced in ('online', 'offline')`))
    .execute();
  // A node that has connected before counts as announced online: the restart of this upgrade,
  // its agents reconnecting within the grace, raises nothing; one that stays away raises node.offline.
  await sql`update nodes set presence_announced = 'online' where last_seen_at is not null`.execute(db);
  await db.schema
    .createTable('certificate_rollouts')
    .addColumn('certificate_id', 'text', (c) => c.notNull().references('certificates.id').onDelete('cascade'))
    .addColumn('node_id', 'text', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    // The node's desired revision that carries the material: served once applied_revision reaches it.
    .addColumn('revision', 'int8', (c) => c.notNull())
    .addColumn('not_after', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('certificate_rollouts_pkey', ['certificate_id', 'node_id'])
    .execute();
  await db.schema.createIndex('certificate_rollouts_node').on('certificate_rollouts').column('node_id').execute();
}
