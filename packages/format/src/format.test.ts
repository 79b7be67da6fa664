import { describe, expect, it } from 'vitest';
import { FORMAT_BROWSER_MODULE } from './gen/browser-module.ts';
import { currencyExponent, formatBytes, formatDateTimeUtc, formatDuration, formatMoney, formatRelativeTime } from './index.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const TiB = 1024 * GiB;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('sizes', () => {
  it('are in binary units: a 50 GiB plan reads "50 GiB", never "53.69 GB"', () => {
    expect(formatBytes(50 * GiB)).toBe('50 GiB');
    expect(formatBytes(53_687_091_200)).toBe('50 GiB');
    expect(formatBytes(50_000_000_000)).toBe('46.6 GiB');
    expect(formatBytes(KiB)).toBe('1 KiB');
    expect(formatBytes(3 * MiB)).toBe('3 MiB');
    expect(formatBytes(2 * TiB)).toBe('2 TiB');
  });

  it('below 1 KiB are whole bytes; nothing is negative or not a number', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1023.4)).toBe('1,023 B');
    expect(formatBytes(-5)).toBe('0 B');
    expect(formatBytes(Number.NaN)).toBe('0 B');
  });

  it('have up to 3 significant digits, rounded to the nearest, without trailing zeros', () => {
    expect(formatBytes(1.5 * GiB)).toBe('1.5 GiB');
    expect(formatBytes(1.234 * GiB)).toBe('1.23 GiB');
    expect(formatBytes(1.236 * GiB)).toBe('1.24 GiB');
    expect(formatBytes(12.34 * GiB)).toBe('12.3 GiB');
    expect(formatBytes(123.4 * MiB)).toBe('123 MiB');
    expect(formatBytes(123.6 * MiB)).toBe('124 MiB');
    expect(formatBytes(1000 * MiB)).toBe('1,000 MiB');
    expect(formatBytes(89_012_345 + 1_234_567)).toBe('86.1 MiB');
  });

  it('that round to 1024 of a unit read as 1 of the next', () => {
    expect(formatBytes(1023.7 * MiB)).toBe('1 GiB');
    expect(formatBytes(1024 * KiB - 1)).toBe('1 MiB');
    expect(formatBytes(1023.4 * MiB)).toBe('1,023 MiB');
  });

  it('stop at TiB', () => {
    expect(formatBytes(2048 * TiB)).toBe('2,048 TiB');
  });

  it('take the locale’s digits and separators, never its unit names', () => {
    expect(formatBytes(1.5 * GiB, 'de')).toBe('1,5 GiB');
    expect(formatBytes(1000 * MiB, 'de')).toBe('1.000 MiB');
    expect(formatBytes(1.5 * GiB, 'not a locale!')).toBe('1.5 GiB');
  });
});

describe('durations and relative times', () => {
  const now = new Date('2026-12-01T12:00:00Z');
  const later = (ms: number) => new Date(now.getTime() + ms);

  it('30 days bought a moment ago read "in 30 days" (rounded to the nearest, not down)', () => {
    expect(formatRelativeTime(later(30 * DAY - 5 * SECOND), now)).toBe('in 30 days');
    expect(formatRelativeTime(later(30 * DAY), now)).toBe('in 30 days');
    expect(formatRelativeTime(later(29 * DAY + 13 * HOUR), now)).toBe('in 30 days');
    expect(formatRelativeTime(later(29 * DAY + 11 * HOUR), now)).toBe('in 29 days');
  });

  it('are said in hours under 48 hours, minutes under an hour, seconds under a minute', () => {
    expect(formatRelativeTime(later(36 * HOUR), now)).toBe('in 36 hours');
    expect(formatRelativeTime(later(47 * HOUR + 40 * MINUTE), now)).toBe('in 2 days');
    expect(formatRelativeTime(later(48 * HOUR), now)).toBe('in 2 days');
    expect(formatRelativeTime(later(1 * DAY), now)).toBe('in 24 hours');
    expect(formatRelativeTime(later(59 * MINUTE + 40 * SECOND), now)).toBe('in 1 hour');
    expect(formatRelativeTime(later(90 * MINUTE), now)).toBe('in 2 hours');
    expect(formatRelativeTime(later(15 * MINUTE), now)).toBe('in 15 minutes');
    expect(formatRelativeTime(later(20 * SECOND), now)).toBe('in 20 seconds');
    expect(formatRelativeTime(later(1 * SECOND), now)).toBe('in 1 second');
  });

  it('in the past read "ago" by the same rule; under half a second is "now"', () => {
    expect(formatRelativeTime(later(-3 * DAY - 1 * HOUR), now)).toBe('3 days ago');
    expect(formatRelativeTime(later(-5 * HOUR), now)).toBe('5 hours ago');
    expect(formatRelativeTime(later(-400), now)).toBe('now');
    expect(formatRelativeTime(now, now)).toBe('now');
  });

  it('never go to months or years: a year is "in 365 days"', () => {
    expect(formatRelativeTime(later(365 * DAY), now)).toBe('in 365 days');
  });

  it('as lengths use the same units and rounding: "15 minutes", "24 hours", "30 days"', () => {
    expect(formatDuration(15 * MINUTE)).toBe('15 minutes');
    expect(formatDuration(24 * HOUR)).toBe('24 hours');
    expect(formatDuration(30 * DAY)).toBe('30 days');
    expect(formatDuration(1 * DAY + 23 * HOUR)).toBe('47 hours');
    expect(formatDuration(1 * MINUTE)).toBe('1 minute');
  });

  it('take the locale’s words', () => {
    expect(formatRelativeTime(later(30 * DAY), now, 'de')).toBe('in 30 Tagen');
    expect(formatDuration(15 * MINUTE, 'de')).toBe('15 Minuten');
  });
});

describe('moments', () => {
  it('read "YYYY-MM-DD HH:MM UTC" for every reader, minutes cut', () => {
    expect(formatDateTimeUtc(new Date('2027-01-01T00:00:59.900Z'))).toBe('2027-01-01 00:00 UTC');
    expect(formatDateTimeUtc('2027-01-31T13:45:00.000Z')).toBe('2027-01-31 13:45 UTC');
    expect(formatDateTimeUtc('not a date')).toBe('');
  });
});

describe('money', () => {
  it('an amount in minor units reads by the currency’s ISO 4217 exponent, not the browser’s own data', () => {
    expect([currencyExponent('EUR'), currencyExponent('JPY'), currencyExponent('KWD')]).toEqual([2, 0, 3]);
    expect(formatMoney(990, 'EUR')).toBe('€9.90');
    expect(formatMoney(500, 'JPY')).toBe('¥500');
    // Intl puts a no-break space between a code and the number.
    const spaced = (s: string) => s.replace(/\u00a0/g, ' ');
    expect(spaced(formatMoney(1234, 'KWD'))).toBe('KWD 1.234');
    // Two fraction digits always, even where a runtime's currency data says otherwise.
    expect(spaced(formatMoney(990, 'HUF'))).toBe('HUF 9.90');
    expect(spaced(formatMoney(99000, 'RUB', 'ru'))).toBe('990,00 ₽');
    expect(formatMoney(990, 'EUR', 'fa')).toContain('۹٫۹۰');
  });

  it('a code the runtime cannot format still reads as an amount and a code, never an exception', () => {
    expect(formatMoney(990, 'not-a-code')).toBe('9.90 not-a-code');
  });
});

describe('the browser module', () => {
  it('is this formatter, with no import (a page loads it as it is) and the same answers', async () => {
    expect(FORMAT_BROWSER_MODULE).not.toMatch(/^\s*import\b/m);
    const url = `data:text/javascript;base64,${Buffer.from(FORMAT_BROWSER_MODULE).toString('base64')}`;
    const browser = (await import(/* @vite-ignore */ url)) as typeof import('./index.ts');
    const now = new Date('2026-12-01T12:00:00Z');
    for (const bytes of [0, 512, 1.234 * GiB, 50 * GiB, 1023.7 * MiB]) expect(browser.formatBytes(bytes)).toBe(formatBytes(bytes));
    for (const ms of [-3 * DAY, 30 * DAY - 5 * SECOND, 36 * HOUR])
      expect(browser.formatRelativeTime(new Date(now.getTime() + ms), now)).toBe(formatRelativeTime(new Date(now.getTime() + ms), now));
    expect(browser.formatDateTimeUtc('2027-01-31T13:45:00.000Z')).toBe('2027-01-31 13:45 UTC');
  });
});
