import type { ClientRow, Renewal, SubscriptionStatus } from '@svc/db';
import { nextPeriodStart } from '../subscriptions/limits.ts';
import type { SubscriptionWithCounters } from '../subscriptions/subscription-rows.ts';
import { currentStatus } from '../subscriptions/subscription-status.ts';

/** The client as the portal shows them to themselves. */
export interface PortalClientView {
  id: string;
  email: string;
  status: ClientRow['status'];
  email_verified_at: string | null;
  has_password: boolean;
  created_at: string;
}

export const portalClientView = (r: ClientRow): PortalClientView => ({
  id: r.id,
  email: r.email,
  status: r.status,
  email_verified_at: r.email_verified_at?.toISOString() ?? null,
  has_password: r.password_hash !== null,
  created_at: r.created_at.toISOString(),
});

/**
 * A subscription as its customer sees it: status as of now, usage of the current period,
 * limit, expiry. Not the admin's note or access groups; the link has its own route.
 */
export interface PortalSubscriptionView {
  id: string;
  status: SubscriptionStatus;
  used_bytes: number;
  uplink_bytes: number;
  downlink_bytes: number;
  /** null: unlimited. */
  traffic_limit_bytes: number | null;
  /** null: never expires. */
  expires_at: string | null;
  renewal: Renewal;
  period_started_at: string;
  /** When the traffic count starts again (the renewal's next period, UTC); null for no_reset. */
  next_reset_at: string | null;
  plan_id: string | null;
  credentials_rotated_at: string | null;
  created_at: string;
}

export const portalSubscriptionView = (r: SubscriptionWithCounters, now: Date): PortalSubscriptionView => ({
  id: r.id,
  status: currentStatus(r, now),
  used_bytes: Number(r.used_bytes),
  uplink_bytes: Number(r.period_uplink_bytes),
  downlink_bytes: Number(r.period_downlink_bytes),
  traffic_limit_bytes: r.traffic_limit_bytes === null ? null : Number(r.traffic_limit_bytes),
  expires_at: r.expires_at?.toISOString() ?? null,
  renewal: r.renewal,
  period_started_at: r.period_started_at.toISOString(),
  next_reset_at: nextPeriodStart(r.renewal, now)?.toISOString() ?? null,
  plan_id: r.plan_id,
  credentials_rotated_at: r.credentials_rotated_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
});
