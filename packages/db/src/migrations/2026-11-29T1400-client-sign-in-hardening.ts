import { type Kysely, sql } from 'kysely';

// Issue 29 items 1 and 4. Frozen in time: Kysely<any>.
//
// magic_link_tokens.password_hash: the Argon2id hash a password registration chose, carried by
// that registration's confirmation link only and applied to the client when that link is what
// confirms the email (docs/portal.md, "A password only with a confirmed email"). Until then the
// client has no password, so a stranger who registers someone else's address owns nothing once
// the real owner confirms it another way (account pre-hijacking).
//
// Unconfirmed clients lose the password they had: before this migration a registration stored it
// on the client, and a requested sign-in link would have kept it at confirmation. A registration
// still in its confirmation window at the upgrade confirms without a password; the customer sets
// one after signing in.
//
// client_known_addresses: addresses (SHA-256 of the address key) a client signed in from, by
// password or magic link, with the last time. Such an address keeps signing in while strangers
// exhaust the account's budget for unknown addresses (rate_limits.login.per_account).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('magic_link_tokens').addColumn('password_hash', 'text').execute();
  await sql`update clients set password_hash = null where email_verified_at is null and password_hash is not null`.execute(db);
  await db.schema
    .createTable('client_known_addresses')
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('address_hash', 'text', (c) => c.notNull())
    .addColumn('last_success_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('client_known_addresses_pkey', ['client_id', 'address_hash'])
    .execute();
}
