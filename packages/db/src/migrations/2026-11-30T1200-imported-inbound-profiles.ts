import type { Kysely } from 'kysely';

// Issue 34: a source inbound becomes an inbound profile too (its transport, security, REALITY
// key, Shadowsocks server key as the source runs them), bound on the nodes the operator names.
// The profile the import made, so a re-import binds it on more nodes instead of making another.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('imported_inbounds')
    .addColumn('profile_id', 'text', (c) => c.references('inbound_profiles.id').onDelete('set null'))
    .execute();
}
