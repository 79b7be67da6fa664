import { type Kysely, sql } from 'kysely';

// Outbound webhooks (issue 14 item 5, docs/notifications.md): the endpoints an admin
// registers, and one delivery per endpoint and event with its attempts, status and when it is
// tried next, so retries survive restarts. Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  const ts = (c: any) => c.notNull();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    // null = every event type; else the types subscribed to.
    .addColumn('event_types', 'jsonb')
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    // The signing secret, sealed with the installation key.
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    // The envelope as sent, byte for byte on every attempt (what the signature covers).
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'succeeded', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_response_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', ts)
    .addColumn('updated_at', 'timestamptz', ts)
    // One delivery of an event per endpoint: a dispatch that runs again adds nothing.
    .addUniqueConstraint('webhook_deliveries_endpoint_event', ['endpoint_id', 'event_id'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'id']).execute();
}
