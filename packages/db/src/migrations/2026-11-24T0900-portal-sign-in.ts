import { type Kysely, sql } from 'kysely';

// The customer portal and sign-in on both surfaces (issue 14): one-time magic-link tokens,
// OAuth identities per surface, OAuth authorization requests in flight (state and PKCE), and
// the event outbox that notifications (mail to owners, outbound webhooks) are sent from.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  const ts = (c: any) => c.notNull();

  // Spec 3.3 / 5.7: only the SHA-256 of the token is kept; one use; 15 minutes.
  await db.schema
    .createTable('magic_link_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('expires_at', 'timestamptz', ts)
    .addColumn('used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('magic_link_tokens_client').on('magic_link_tokens').columns(['client_id', 'created_at']).execute();

  // Spec 2.2: admin_oauth_identity and client_oauth_identity, separate records per surface.
  for (const [table, owner] of [
    ['admin_oauth_identities', 'admins'],
    ['client_oauth_identities', 'clients'],
  ] as const) {
    const subject = owner === 'admins' ? 'admin_id' : 'client_id';
    await db.schema
      .createTable(table)
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('provider_user_id', 'text', (c) => c.notNull())
      .addColumn(subject, 'text', (c) => c.notNull().references(`${owner}.id`).onDelete('cascade'))
      .addColumn('email', 'text')
      .addColumn('created_at', 'timestamptz', ts)
      .addColumn('last_used_at', 'timestamptz')
      .addPrimaryKeyConstraint(`${table}_pk`, ['provider', 'provider_user_id'])
      // One identity of a provider per subject.
      .addUniqueConstraint(`${table}_subject_provider`, [subject, 'provider'])
      .execute();
  }

  // An authorization request between the redirect and the callback: the state (hashed), the
  // PKCE verifier and nonce, the surface, and for linking from settings the signed-in subject.
  await db.schema
    .createTable('oauth_requests')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('surface', 'text', (c) => c.notNull().check(sql`surface in ('admin', 'client')`))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('link_subject_id', 'text')
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('expires_at', 'timestamptz', ts)
    .addColumn('used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('oauth_requests_expires').on('oauth_requests').column('expires_at').execute();

  // Domain events (spec 6: client.registered, and the catalogue that follows), written in the
  // transaction of the change that caused them; the worker dispatches them to the notification
  // channels and marks them. A lost after-commit job leaves dispatched_at empty for the sweep.
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('occurred_at', 'timestamptz', ts)
    .addColumn('dispatched_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('events_undispatched').on('events').column('id').where(sql.ref('dispatched_at'), 'is', null).execute();
}
