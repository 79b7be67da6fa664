import type { Kysely } from 'kysely';

// Usage is credited only for subscriptions the reporting node serves (issue 12.4). A node that
// stopped serving one keeps being credited for a short grace (its agent applies the change and
// sends what it counted before): these rows remember the removed links until then. Links, not
// (node, subscription) pairs: removing an inbound from a group of 100,000 members writes one
// row, not 100,000. No foreign keys: the grace outlives a deleted group or node by minutes at
// most, and expired rows are removed by the next write.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  // A node stopped carrying an access group (its inbound left the group, or moved to another node).
  await db.schema
    .createTable('node_group_grace')
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('access_group_id', 'text', (c) => c.notNull())
    .addColumn('until', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('node_group_grace_pk', ['node_id', 'access_group_id'])
    .execute();
  // A subscription left an access group.
  await db.schema
    .createTable('subscription_group_grace')
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('access_group_id', 'text', (c) => c.notNull())
    .addColumn('until', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('subscription_group_grace_pk', ['subscription_id', 'access_group_id'])
    .execute();
}
