import type { Kysely } from 'kysely';

// Issue 35.1: named API tokens for integrations (bots, shops, dashboards): scoped, expiring,
// optionally bound to source addresses, stored as a hash, acting as their creator as the creator
// is now (a deleted creator's tokens go with them). Audit entries name the token they came through.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('api_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('admin_id', 'text', (c) => c.notNull().references('admins.id').onDelete('cascade'))
    // ["role"] (the creator's whole rights) or ["nodes:read", "subscriptions:write", ...].
    .addColumn('scopes', 'jsonb', (c) => c.notNull())
    // SHA-256 of the secret, hex: the secret is shown once and never stored.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    // The secret's first characters, to tell tokens apart in a list.
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('allowed_ips', 'jsonb')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('last_used_ip', 'text')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_tokens_admin').on('api_tokens').column('admin_id').execute();
  await db.schema.alterTable('audit_log').addColumn('via_token_id', 'text').execute();
}
