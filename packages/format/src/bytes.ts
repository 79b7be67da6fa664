import { cachedIntl } from './locale.ts';

/** IEC binary units: what apps (v2rayN, Clash, sing-box) show for the same header numbers. */
export const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/**
 * A byte count as people read it, the one rule of every page, mail and header text:
 * - binary units (1 KiB = 1024 B), never decimal GB, so a 50 GiB plan reads "50 GiB"
 *   everywhere and agrees with what apps compute from `subscription-userinfo`;
 * - below 1 KiB whole bytes ("512 B"); else the largest unit whose value is at least 1, up to
 *   TiB ("2,048 TiB" beyond);
 * - up to 3 significant digits: 2 decimals below 10, 1 below 100, none from 100 ("1.23 GiB",
 *   "12.3 GiB", "123 GiB"; 1000-1023 keep their four digits), rounded to the nearest, with no
 *   trailing zeros ("50 GiB", "1.5 GiB"); a value that rounds to 1024 moves up a unit
 *   ("1 GiB", never "1,024 MiB");
 * - digits and separators follow `locale` ("1,5 GiB" in German); the unit symbols do not.
 */
export function formatBytes(bytes: number, locale?: string): string {
  const n = Number.isFinite(bytes) ? Math.max(0, bytes) : 0;
  if (Math.round(n) < 1024) return `${numbers(locale, 0).format(Math.round(n))} B`;
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  let digits = fractionDigits(value);
  if (roundTo(value, digits) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
    digits = fractionDigits(value);
  }
  return `${numbers(locale, digits).format(value)} ${BYTE_UNITS[unit]}`;
}

const fractionDigits = (value: number): number => (value < 10 ? 2 : value < 100 ? 1 : 0);
const roundTo = (value: number, digits: number): number => Math.round(value * 10 ** digits) / 10 ** digits;

const byDigits = [0, 1, 2].map((d) => cachedIntl((locale) => new Intl.NumberFormat(locale, { maximumFractionDigits: d })));
const numbers = (locale: string | undefined, digits: number): Intl.NumberFormat => (byDigits[digits] ?? byDigits[0]!)(locale);
