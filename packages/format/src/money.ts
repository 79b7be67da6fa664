/**
 * Money as people read it. Amounts are stored in minor units (cents); where the decimal point
 * goes is the currency's exponent by ISO 4217: 2 unless the currency is one of the zero- or
 * three-decimal ones. One table for the panel, the portal, the mails and the providers'
 * decimal strings (the domain's money.ts builds on it), so "9.90 EUR" is the same amount
 * everywhere, whatever a browser's own currency data says.
 */
const ZERO_DECIMAL: ReadonlySet<string> = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'ISK',
  'JPY',
  'KMF',
  'KRW',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);
const THREE_DECIMAL: ReadonlySet<string> = new Set(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND']);

/** The minor-unit digits of a currency: 2 for EUR, 0 for JPY, 3 for KWD. */
export const currencyExponent = (currency: string): number => (ZERO_DECIMAL.has(currency) ? 0 : THREE_DECIMAL.has(currency) ? 3 : 2);

/**
 * An amount in minor units in the reader's language: formatMoney(990, 'EUR', 'de') is
 * "9,90 €", in 'fa' with Persian digits. A code the runtime does not know reads "990 XYZ"-like
 * ("9.90 XYZ"): never an exception.
 */
export function formatMoney(minor: number, currency: string, locale = 'en'): string {
  const digits = currencyExponent(currency);
  const major = minor / 10 ** digits;
  try {
    return new Intl.NumberFormat(locale, {
      style: 'currency',
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(major);
  } catch {
    return `${major.toFixed(digits)} ${currency}`;
  }
}
