import type { Db, SubscriptionCountersRow, SubscriptionRow } from '@svc/db';

/**
 * A subscription as views and rules read it: its row and its traffic counters, which live in a
 * narrow row of their own (subscription_counters, issue 37.1: the usage ingest rewrites only
 * them; every subscription has one). Queries alias the counters `sc`.
 */
export type SubscriptionWithCounters = SubscriptionRow & Omit<SubscriptionCountersRow, 'subscription_id'>;

/** The counters' columns as a query joined through subscriptionsWithCounters selects them. */
export const COUNTER_COLUMNS = ['sc.used_bytes', 'sc.period_uplink_bytes', 'sc.period_downlink_bytes', 'sc.lifetime_used_bytes'] as const;

/** subscriptions joined to their counters (alias `sc`), every column of both selected. */
export const subscriptionsWithCounters = (db: Db) =>
  db
    .selectFrom('subscriptions')
    .innerJoin('subscription_counters as sc', 'sc.subscription_id', 'subscriptions.id')
    .selectAll('subscriptions')
    .select(COUNTER_COLUMNS);

/** The counters of a subscription read with them, to complete a row an update returned. */
export const countersOf = (r: Omit<SubscriptionCountersRow, 'subscription_id'>): Omit<SubscriptionCountersRow, 'subscription_id'> => ({
  used_bytes: r.used_bytes,
  period_uplink_bytes: r.period_uplink_bytes,
  period_downlink_bytes: r.period_downlink_bytes,
  lifetime_used_bytes: r.lifetime_used_bytes,
});

/**
 * The traffic count starts again (a new renewal period, a plan's new term, reset_usage): this
 * period's counters to 0; the lifetime count keeps going. The counters rows are locked until
 * the unit ends (a credit meanwhile waits for them, then adds to 0).
 */
export async function zeroPeriodCounters(db: Db, subscriptionIds: readonly string[]): Promise<void> {
  if (subscriptionIds.length === 0) return;
  await db
    .updateTable('subscription_counters')
    .set({ used_bytes: 0, period_uplink_bytes: 0, period_downlink_bytes: 0 })
    .where('subscription_id', 'in', subscriptionIds)
    .execute();
}
