import { type Kysely, sql } from 'kysely';

// Issue 37.1: the foreign key usage_hourly.subscription_id -> subscriptions made PostgreSQL look
// up the subscription again for every hourly row the usage ingest inserts or updates (its RI
// trigger, one index probe and row lock per row: 38-40 ms of a report of 5,000 entries), although
// the same statement has just updated, and so locked, that subscription: the ingest writes an
// hourly row only for a subscription it credited (usage-ingest.ts), so an hourly row of a
// subscription that does not exist cannot be written.
// What the key did besides, its cascade, stays: one statement trigger after a delete of
// subscriptions removes their hourly rows (whatever deleted them), in the deleting statement's
// transaction, as the cascade did. A delete racing a report is ordered by the subscription's
// row lock: a report credited first has its hourly rows removed by the delete (the trigger's
// statement sees them committed); a report after the delete finds no subscription to credit.
// Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table usage_hourly drop constraint if exists usage_hourly_subscription_id_fkey`.execute(db);
  await sql`
    create function usage_hourly_of_deleted_subscriptions() returns trigger language plpgsql as $$
    begin
      delete from usage_hourly u using deleted_subscriptions d where u.subscription_id = d.id;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger subscriptions_deleted_remove_hourly_rows
      after delete on subscriptions referencing old table as deleted_subscriptions
      for each statement execute function usage_hourly_of_deleted_subscriptions()`.execute(db);
}
