/** Amounts are in minor units (cents): the currency's own digits decide where the point goes. */
export function formatMoney(lng: string, minor: number, currency: string): string {
  try {
    const f = new Intl.NumberFormat(lng, { style: 'currency', currency });
    const digits = f.resolvedOptions().maximumFractionDigits ?? 2;
    return f.format(minor / 10 ** digits);
  } catch {
    return `${minor} ${currency}`;
  }
}

/** The minor-unit digits of a currency (2 for USD, 0 for JPY), for forms that take major units. */
export function currencyDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}
