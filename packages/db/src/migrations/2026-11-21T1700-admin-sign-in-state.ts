import type { Kysely } from 'kysely';

// Issue 12, items 6 and 7. Frozen in time: Kysely<any>.
//
// admins.token_generation: access tokens carry the generation they were signed in; a password
// change or reset bumps it, and every request compares (a token of an older generation is
// refused although it has not expired). A counter, not a time, so replicas' clocks never matter.
//
// admin_known_addresses: addresses (as a SHA-256 of admin id and address key) an admin signed
// in from successfully, with the last time. Such an address keeps signing in while strangers
// exhaust the account's budget for unknown addresses. A few per admin (the sign-in trims).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('admins')
    .addColumn('token_generation', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('admin_known_addresses')
    .addColumn('admin_id', 'text', (c) => c.notNull().references('admins.id').onDelete('cascade'))
    .addColumn('address_hash', 'text', (c) => c.notNull())
    .addColumn('last_success_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('admin_known_addresses_pkey', ['admin_id', 'address_hash'])
    .execute();
}
