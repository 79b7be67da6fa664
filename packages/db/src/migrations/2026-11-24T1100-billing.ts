import { type Kysely, sql } from 'kysely';

// Billing (issue 15, docs/payments.md): what checkout, the webhook ingress and the worker's
// re-reads write. Frozen in time: Kysely<any>.
// - plans.renewal: the traffic period a subscription bought with the plan gets;
// - payments: status `expired`; the checkout's Idempotency-Key is unique per client, with the
//   hash of the body it came with; what the provider answered (kept to answer a replay);
//   when the plan's effect was applied and taken back (each at most once); the re-read
//   schedule of a pending payment;
// - payment_events: each verified provider webhook once (provider id, event id), processed by
//   a job.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('plans')
    .addColumn('renewal', 'text', (c) => c.notNull().defaultTo('no_reset').check(sql`renewal in ('no_reset', 'day', 'week', 'month')`))
    .execute();

  await sql`alter table payments drop constraint payments_status_check`.execute(db);
  await sql`alter table payments add constraint payments_status_check
    check (status in ('pending', 'succeeded', 'failed', 'expired', 'canceled', 'refunded'))`.execute(db);
  await db.schema
    .alterTable('payments')
    .addColumn('request_hash', 'text')
    .addColumn('checkout_started_at', 'timestamptz')
    .addColumn('instructions', 'text')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('status_reason', 'text')
    .addColumn('paid_at', 'timestamptz')
    .addColumn('applied_at', 'timestamptz')
    .addColumn('reverted_at', 'timestamptz')
    .addColumn('applied_effect', 'jsonb')
    .addColumn('next_check_at', 'timestamptz')
    .addColumn('check_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('payments_client_idempotency_key')
    .on('payments')
    .columns(['client_id', 'idempotency_key'])
    .unique()
    .where(sql.ref('idempotency_key'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('payments_due_check')
    .on('payments')
    .column('next_check_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema.createIndex('payments_created').on('payments').columns(['created_at', 'id']).execute();

  await db.schema
    .createTable('payment_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('provider_id', 'text', (c) => c.notNull().references('payment_providers.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('payment_id', 'text')
    .addColumn('provider_payment_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint')
    .addColumn('currency', 'text')
    .addColumn('occurred_at', 'timestamptz')
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .addColumn('processed_at', 'timestamptz')
    // What processing did: applied, stale, unknown-payment, mismatch ...
    .addColumn('outcome', 'text')
    .addUniqueConstraint('payment_events_provider_event', ['provider_id', 'event_id'])
    .execute();
  await db.schema
    .createIndex('payment_events_unprocessed')
    .on('payment_events')
    .column('received_at')
    .where(sql.ref('processed_at'), 'is', null)
    .execute();
}
