import { z } from 'zod';

/**
 * Issue 36: the limits a subscription (and a plan, which copies them onto subscriptions bought
 * or renewed with it) sets on live connections; the node's agent enforces them (docs/limits.md).
 */

/** Distinct client addresses (IPv4, or IPv6 folded to /64) at once; null: no limit. */
export const DeviceLimit = z
  .number()
  .int()
  .min(1)
  .max(1000)
  .nullable()
  .meta({ description: 'distinct client addresses (IPv6 folded to /64) on live connections at once; null: no limit' });

/** A speed cap in bits per second (8 kbit/s to 100 Gbit/s); null: uncapped. */
export const SpeedCapBps = (direction: 'upload' | 'download') =>
  z
    .number()
    .int()
    .min(8_000)
    .max(100_000_000_000)
    .nullable()
    .meta({ description: `${direction} cap in bits per second (8,000 to 100,000,000,000); null: uncapped` });

/** The three fields as a subscription or plan view shows them. */
export interface LiveLimits {
  device_limit: number | null;
  upload_bps: number | null;
  download_bps: number | null;
}

/** A stored row's limits (int8 columns may come back as text). */
export const liveLimitsOf = (r: {
  device_limit: number | string | null;
  upload_bps: number | string | null;
  download_bps: number | string | null;
}): LiveLimits => ({
  device_limit: r.device_limit === null ? null : Number(r.device_limit),
  upload_bps: r.upload_bps === null ? null : Number(r.upload_bps),
  download_bps: r.download_bps === null ? null : Number(r.download_bps),
});
