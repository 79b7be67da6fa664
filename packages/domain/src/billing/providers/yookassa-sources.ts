import { type CidrRange, cidrMatcher, parseCidrList } from './source-cidrs.ts';

/**
 * The addresses YooKassa sends its HTTP notifications from, as it publishes them (checked
 * 2026-11). The default of the provider setting `allowed_source_cidrs`.
 */
export const YOOKASSA_SOURCE_CIDRS =
  '185.71.76.0/27, 185.71.77.0/27, 77.75.153.0/25, 77.75.156.11, 77.75.156.35, 77.75.154.128/25, 2a02:5180::/32';

/** The setting's value that turns the check off (behind a proxy that hides the sender's address). */
export const ANY_SOURCE = 'any';

/** Checks the setting's value: `any`, or a list of addresses and ranges. */
export function checkSourceCidrs(value: string): string | null {
  if (value.trim().toLowerCase() === ANY_SOURCE) return null;
  const parsed = parseCidrList(value);
  return 'error' in parsed ? parsed.error : null;
}

/** The allow-list from the setting (default: YooKassa's published ranges); null when it is off. */
export function yookassaSourceMatcher(setting: string | undefined): ((address: string) => boolean) | null {
  const text = setting?.trim() ? setting : YOOKASSA_SOURCE_CIDRS;
  if (text.trim().toLowerCase() === ANY_SOURCE) return null;
  const parsed = parseCidrList(text);
  const ranges: CidrRange[] = 'ranges' in parsed ? parsed.ranges : [];
  // A stored value that no longer parses allows nothing rather than everything.
  return cidrMatcher(ranges);
}
