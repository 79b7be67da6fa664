import { type Kysely, sql } from 'kysely';

// Issue 34: a subscription whose term starts on first use (Marzban's "on hold", 3x-ui's negative
// expiry): while the term is set, expires_at is null; the first traffic credited sets
// expires_at = then + term, and start_by (when set) starts it at the latest. Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('subscriptions')
    .addColumn('starts_on_first_use_seconds', 'bigint', (c) => c.check(sql`starts_on_first_use_seconds > 0`))
    .addColumn('start_by', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('subscriptions_start_by')
    .on('subscriptions')
    .column('start_by')
    .where(sql.ref('start_by'), 'is not', null)
    .execute();
}
