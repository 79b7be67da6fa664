import type { SubscriptionDocument, SubscriptionStatus } from './model.ts';

/** The words the browser page uses (English), and the number and date formats behind them. */

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

const UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/** Binary units, one decimal: 512 B, 1.0 KiB, 86.1 MiB, 100.0 GiB, 2048.0 TiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${Math.max(0, Math.round(bytes))} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** "2027-01-01 00:00 UTC". */
export function formatUtc(date: Date): string {
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

const DAY_MS = 86_400_000;
const days = (n: number) => `${n} ${n === 1 ? 'day' : 'days'}`;

/** "in N days" / "expired N days ago" (whole days, rounded down), relative to `now`. */
export function relativeExpiry(expiresAt: Date, now: Date): string {
  const diff = expiresAt.getTime() - now.getTime();
  if (diff > 0) {
    const n = Math.floor(diff / DAY_MS);
    return n === 0 ? 'in less than a day' : `in ${days(n)}`;
  }
  const n = Math.floor(-diff / DAY_MS);
  return n === 0 ? 'expired less than a day ago' : `expired ${days(n)} ago`;
}

export interface Usage {
  used: string;
  /** "unlimited" without a limit. */
  total: string;
  upload: string;
  download: string;
  /** Share of the limit used, 0-100 with one decimal; null without a limit. */
  percent: number | null;
}

export function usage(doc: SubscriptionDocument): Usage {
  const used = doc.upload_bytes + doc.download_bytes;
  const limit = doc.total_bytes;
  const percent = limit === null ? null : limit <= 0 ? 100 : Math.min(100, Math.round((used / limit) * 1000) / 10);
  return {
    used: formatBytes(used),
    total: limit === null ? 'unlimited' : formatBytes(limit),
    upload: formatBytes(doc.upload_bytes),
    download: formatBytes(doc.download_bytes),
    percent,
  };
}
