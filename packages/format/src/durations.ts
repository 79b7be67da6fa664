import { cachedIntl } from './locale.ts';

type Unit = 'second' | 'minute' | 'hour' | 'day';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * The unit and whole count a span of `ms` (not negative) is said in, the one rule of durations
 * and relative times: rounded to the nearest whole unit, the unit chosen on the rounded count,
 * so no span reads as "60 minutes" or "in 0 days":
 * - under a minute: seconds; under an hour: minutes; under 48 hours: hours ("in 36 hours"
 *   says more than "in 2 days"); from 48 hours: days, never months or years (plans are sold in
 *   days, and "in 365 days" is exact where "in 1 year" is not).
 * Nearest, not down: 30 days minus the seconds a request takes is "30 days" (rounded down it
 * was "in 29 days" right after buying 30); 29 days 13 hours is "30 days" as well.
 */
export function spanUnit(ms: number): { count: number; unit: Unit } {
  const abs = Math.abs(ms);
  const seconds = Math.round(abs / SECOND);
  if (seconds < 60) return { count: seconds, unit: 'second' };
  const minutes = Math.round(abs / MINUTE);
  if (minutes < 60) return { count: minutes, unit: 'minute' };
  const hours = Math.round(abs / HOUR);
  if (hours < 48) return { count: hours, unit: 'hour' };
  return { count: Math.round(abs / DAY), unit: 'day' };
}

/** A length of time: "15 minutes", "24 hours", "30 days" (spanUnit's rule; unit names in `locale`). */
export function formatDuration(ms: number, locale?: string): string {
  const { count, unit } = spanUnit(Number.isFinite(ms) ? ms : 0);
  return unitFormats[unit](locale).format(count);
}

/**
 * When `at` is from `now`: "in 30 days", "3 hours ago", "now" (under half a second either
 * way). spanUnit's rule on the distance, in `locale`'s words (Intl.RelativeTimeFormat, always
 * numeric: "in 1 day", never "tomorrow", which is wrong at 23:00 for 25 hours).
 */
export function formatRelativeTime(at: Date, now: Date, locale?: string): string {
  const ms = at.getTime() - now.getTime();
  if (!Number.isFinite(ms)) return '';
  const { count, unit } = spanUnit(ms);
  if (count === 0) return relativeAuto(locale).format(0, 'second');
  return relative(locale).format(ms < 0 ? -count : count, unit);
}

const unitFormat = (unit: Unit) =>
  cachedIntl((locale) => new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'long', maximumFractionDigits: 0 }));
const unitFormats: Record<Unit, (locale: string | undefined) => Intl.NumberFormat> = {
  second: unitFormat('second'),
  minute: unitFormat('minute'),
  hour: unitFormat('hour'),
  day: unitFormat('day'),
};
const relative = cachedIntl((locale) => new Intl.RelativeTimeFormat(locale, { numeric: 'always' }));
const relativeAuto = cachedIntl((locale) => new Intl.RelativeTimeFormat(locale, { numeric: 'auto' }));
