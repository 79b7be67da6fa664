import { formatBytes, formatRelativeTime } from '@svc/format';
import type { SubscriptionDocument, SubscriptionStatus } from './model.ts';

/**
 * The words the browser page uses (English), with sizes and times through @svc/format as on
 * every page and in every mail; in English too (the locale of the words around them).
 */

export const STATUS_TEXT: Record<SubscriptionStatus, { label: string; detail: string }> = {
  active: { label: 'Active', detail: 'Your subscription is working.' },
  limited: {
    label: 'Traffic limit reached',
    detail: 'You have used all the traffic of your plan. It works again once the traffic is renewed or the plan is upgraded.',
  },
  expired: { label: 'Expired', detail: 'Your subscription has ended. Renew it and your apps reconnect on their next update.' },
  disabled: { label: 'Disabled', detail: 'This subscription has been switched off. Please contact support.' },
  pending: {
    label: 'Awaiting approval',
    detail: 'Your subscription has not been approved yet. You can add it to your app now: it starts working once approved.',
  },
};

/** "in 30 days" / "expired 3 days ago" (@svc/format's rule: the nearest whole unit), relative to `now`. */
export function relativeExpiry(expiresAt: Date, now: Date): string {
  const when = formatRelativeTime(expiresAt, now);
  return expiresAt.getTime() > now.getTime() ? when : `expired ${when}`;
}

export interface Usage {
  used: string;
  /** "unlimited" without a limit. */
  total: string;
  upload: string;
  download: string;
  /** Share of the limit used, 0-100 with one decimal, rounded down (100 only once the limit is reached); null without a limit. */
  percent: number | null;
}

export function usage(doc: SubscriptionDocument): Usage {
  const used = doc.upload_bytes + doc.download_bytes;
  const limit = doc.total_bytes;
  const percent = limit === null ? null : limit <= 0 ? 100 : Math.min(100, Math.floor((used / limit) * 1000) / 10);
  return {
    used: formatBytes(used),
    total: limit === null ? 'unlimited' : formatBytes(limit),
    upload: formatBytes(doc.upload_bytes),
    download: formatBytes(doc.download_bytes),
    percent,
  };
}
