/** Numbers, sizes and dates in the reader's language (Intl), one formatter per language and kind. */
const cache = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat | Intl.RelativeTimeFormat>();

function cached<T extends Intl.NumberFormat | Intl.DateTimeFormat | Intl.RelativeTimeFormat>(key: string, make: () => T): T {
  let f = cache.get(key) as T | undefined;
  if (!f) {
    f = make();
    cache.set(key, f);
  }
  return f;
}

export const formatNumber = (lng: string, n: number): string => cached(`n:${lng}`, () => new Intl.NumberFormat(lng)).format(n);

const UNITS = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte', 'petabyte'] as const;

/** 1536 → "1.5 kB" (binary steps, the unit named by Intl in the reader's language). */
export function formatBytes(lng: string, bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const u = UNITS[unit] as string;
  return cached(
    `b:${lng}:${u}`,
    () => new Intl.NumberFormat(lng, { style: 'unit', unit: u, unitDisplay: 'short', maximumFractionDigits: 1 }),
  ).format(value);
}

export const formatDateTime = (lng: string, iso: string | Date | null | undefined): string =>
  iso ? cached(`dt:${lng}`, () => new Intl.DateTimeFormat(lng, { dateStyle: 'medium', timeStyle: 'short' })).format(new Date(iso)) : '—';

export const formatDate = (lng: string, iso: string | Date | null | undefined): string =>
  iso ? cached(`d:${lng}`, () => new Intl.DateTimeFormat(lng, { dateStyle: 'medium' })).format(new Date(iso)) : '—';

/** "3 minutes ago", "in 2 days". */
export function formatRelative(lng: string, iso: string | Date, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const rtf = cached(`r:${lng}`, () => new Intl.RelativeTimeFormat(lng, { numeric: 'auto' }));
  const steps: Array<[number, Intl.RelativeTimeFormatUnit]> = [
    [60, 'second'],
    [3600, 'minute'],
    [86400, 'hour'],
    [86400 * 30, 'day'],
    [86400 * 365, 'month'],
  ];
  let divisor = 1;
  for (const [limit, unit] of steps) {
    if (Math.abs(seconds) < limit) return rtf.format(Math.round(seconds / divisor), unit);
    divisor = limit;
  }
  return rtf.format(Math.round(seconds / (86400 * 365)), 'year');
}
