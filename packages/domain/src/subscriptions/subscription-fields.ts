import { z } from 'zod';
import { RefId } from '../shared/fields.ts';

export const SubscriptionRenewal = z.enum(['no_reset', 'day', 'week', 'month']);

/** Bytes per renewal period; null is unlimited (0 is a limit reached at once). */
export const TrafficLimitBytes = z
  .number()
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .nullable()
  .meta({ description: 'bytes per renewal period; null is unlimited' });

/** RFC 3339 with a zone, parsed to a Date. */
export const Instant = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .meta({ type: 'string', format: 'date-time' });

/** The access groups a subscription is granted (each must exist: checked by the use case). */
export const SubscriptionAccessGroupIds = z.array(RefId).max(100);

/** What an admin may set as a subscription's status: limited and expired are computed. */
export const AdminSubscriptionStatus = z.enum(['active', 'disabled']);
