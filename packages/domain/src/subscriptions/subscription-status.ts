import type { ClientStatus, SubscriptionStatus } from '@svc/db';
import { sql } from 'kysely';

export interface SubscriptionStatusInput {
  /** An admin switched it off (PATCH status disabled). */
  admin_disabled: boolean;
  used_bytes: number;
  /** null: unlimited. */
  traffic_limit_bytes: number | null;
  /** null: never expires. */
  expires_at: Date | null;
}

/**
 * The one rule for a subscription's status, first match wins:
 * disabled (by an admin) > expired (expires_at <= now) > limited (a limit is set and
 * used_bytes >= limit) > active. Every write stores the result in `subscriptions.status`;
 * reads compute it again, so a subscription whose expiry passed since its last write is
 * shown (and filtered) as expired before any job has written that down.
 */
export function subscriptionStatus(s: SubscriptionStatusInput, now: Date): SubscriptionStatus {
  if (s.admin_disabled) return 'disabled';
  if (s.expires_at !== null && s.expires_at.getTime() <= now.getTime()) return 'expired';
  if (s.traffic_limit_bytes !== null && s.used_bytes >= s.traffic_limit_bytes) return 'limited';
  return 'active';
}

/**
 * `disabled` outranks every computed status, so the stored status is `disabled` exactly
 * when an admin disabled the subscription: no separate flag is needed.
 */
export const isAdminDisabled = (row: { status: SubscriptionStatus }): boolean => row.status === 'disabled';

/** The status of a stored row as of `now`. */
export const currentStatus = (
  row: { status: SubscriptionStatus; used_bytes: number; traffic_limit_bytes: number | null; expires_at: Date | null },
  now: Date,
): SubscriptionStatus =>
  subscriptionStatus(
    {
      admin_disabled: isAdminDisabled(row),
      used_bytes: row.used_bytes,
      traffic_limit_bytes: row.traffic_limit_bytes,
      expires_at: row.expires_at,
    },
    now,
  );

/**
 * Whether a subscription's users belong on its nodes: the subscription is active and so
 * is its client (a banned, pending or rejected client's subscriptions serve nobody). For
 * the desired-state compiler; revision bumps are wider (every status change of either).
 */
export const subscriptionServes = (status: SubscriptionStatus, clientStatus: ClientStatus): boolean =>
  status === 'active' && clientStatus === 'active';

/**
 * The state a subscription link shows its apps: the subscription's status while its client
 * is active; awaiting approval while the client is pending; disabled for a rejected or
 * disabled client (its subscriptions serve nobody).
 */
export const linkStatus = (status: SubscriptionStatus, clientStatus: ClientStatus): SubscriptionStatus | 'pending' =>
  clientStatus === 'active' ? status : clientStatus === 'pending' ? 'pending' : 'disabled';

/**
 * The stored statuses the clock turns into `expired` once expires_at has passed (disabled
 * outranks expired; expired is already so): the rule's expiry step over stored rows, for the
 * SQL forms below, the list filter and the sweep that writes it down.
 */
export const CLOCK_EXPIRES: readonly SubscriptionStatus[] = ['active', 'limited'];

/**
 * A stored status as of `now`: the rule's expiry step applied to what is stored. Every write
 * that moves what the rule reads stores its result, the usage credit included (a limit it
 * reaches is stored in its own unit: subscriptions/limits.ts writeReachedLimits), so the clock
 * is the one input that changes a status with no write; this is all a reader that holds the
 * stored status needs (the desired-state compiler: it reads no counters).
 */
export const storedStatusAsOf = (row: { status: SubscriptionStatus; expires_at: Date | null }, now: Date): SubscriptionStatus =>
  CLOCK_EXPIRES.includes(row.status) && row.expires_at !== null && row.expires_at.getTime() <= now.getTime() ? 'expired' : row.status;

/**
 * When the clock next moves this stored status (its expiry, while it is still ahead), in epoch
 * milliseconds; null when the clock never will (no expiry, already past, or a status the clock
 * leaves alone). Until then storedStatusAsOf gives the same answer for any later `now`: what a
 * result computed from stored rows may be kept for (the gateway's last push kept on disk).
 */
export const statusClockChangesAt = (row: { status: SubscriptionStatus; expires_at: Date | null }, now: Date): number | null =>
  CLOCK_EXPIRES.includes(row.status) && row.expires_at !== null && row.expires_at.getTime() > now.getTime()
    ? row.expires_at.getTime()
    : null;

/**
 * The same rule in SQL, for counts and filters over stored rows: a stored active or limited
 * row whose expires_at has passed is expired (the stored value waits for the sweep).
 */
export const effectiveStatusSql = (now: Date) =>
  sql<SubscriptionStatus>`case when status in (${sql.join(CLOCK_EXPIRES.map((s) => sql.lit(s)))}) and expires_at <= ${now} then 'expired' else status end`;
