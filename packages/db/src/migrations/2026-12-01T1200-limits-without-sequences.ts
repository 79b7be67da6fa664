import { type Kysely, sql } from 'kysely';

// Issue 36: the schema carries no sequence again, so a backup (packages/db/src/backup, which
// copies rows and refuses sequences it could not restore) holds everything limits need.
// - nodes.last_slice_id: the last traffic slice id granted on the node, raised under the node's
//   row lock for each grant (limits/traffic-slices.ts). A slice id only has to grow per node (the
//   agent compares the ids it is sent); started at the highest id the sequence gave there.
// - node_cutoffs: keyed by (node_id, report_id, entry), the entry's position in its report, in
//   place of the bigserial id (ids of existing rows become positions in the order they were taken).
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('nodes')
    .addColumn('last_slice_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`
    update nodes n set last_slice_id = t.top
      from (select node_id, max(slice_id) as top from traffic_slices group by node_id) t
     where t.node_id = n.id`.execute(db);
  await sql`drop sequence traffic_slice_ids`.execute(db);
  await db.schema.alterTable('node_cutoffs').addColumn('entry', 'integer').execute();
  await sql`
    update node_cutoffs c set entry = r.pos
      from (select id, (row_number() over (partition by node_id, report_id order by id))::int - 1 as pos from node_cutoffs) r
     where r.id = c.id`.execute(db);
  await sql`alter table node_cutoffs alter column entry set not null`.execute(db);
  // Dropping the bigserial column drops its sequence and primary key with it.
  await db.schema.alterTable('node_cutoffs').dropColumn('id').execute();
  await db.schema.alterTable('node_cutoffs').addPrimaryKeyConstraint('node_cutoffs_pkey', ['node_id', 'report_id', 'entry']).execute();
}
