/**
 * How sizes, durations and moments read to people: the one formatter of every page, mail and
 * header text (the /sub page, the portal pages, customer and operator mails), importable by
 * server code and web apps alike (no Node API: the build also turns it into the ES module the
 * bare portal page loads, `@svc/format/browser-module`). Rules: docs/subscription-link.md,
 * "Numbers and times".
 */
export { BYTE_UNITS, formatBytes } from './bytes.ts';
export { formatDateTimeUtc } from './date-time.ts';
export { formatDuration, formatRelativeTime, spanUnit } from './durations.ts';
export { DEFAULT_LOCALE } from './locale.ts';
export { currencyExponent, formatMoney } from './money.ts';
