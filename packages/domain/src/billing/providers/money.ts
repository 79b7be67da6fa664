import { currencyExponent } from '@svc/format';
import { ValidationError } from '../../errors.ts';

// Minor units <-> the decimal strings some providers take ("12.50"), by the currency's ISO 4217
// exponent (@svc/format: the same table the panel, the portal and the mails write amounts by).

/** 1250 RUB -> "12.50"; 500 JPY -> "500". */
export function minorToDecimal(amount: number, currency: string): string {
  const exp = currencyExponent(currency);
  const digits = String(amount).padStart(exp + 1, '0');
  return exp === 0 ? digits : `${digits.slice(0, -exp)}.${digits.slice(-exp)}`;
}

/** "12.5" RUB -> 1250; undefined when the text is not a plain non-negative decimal with at most the currency's digits. */
export function decimalToMinor(value: unknown, currency: string): number | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const text = String(value);
  const m = /^(\d{1,15})(?:\.(\d{1,6}))?$/.exec(text);
  if (!m) return undefined;
  const exp = currencyExponent(currency);
  const frac = (m[2] ?? '').replace(/0+$/, '');
  if (frac.length > exp) return undefined;
  const minor = Number(m[1]) * 10 ** exp + Number(frac.padEnd(exp, '0') || '0');
  return Number.isSafeInteger(minor) ? minor : undefined;
}

/** Checks the amount and currency of a checkout before anything is sent. */
export function assertMoney(amount: number, currency: string): void {
  const errors: Record<string, string> = {};
  if (!Number.isSafeInteger(amount) || amount <= 0) errors.amount = 'must be a positive integer of minor units';
  if (!/^[A-Z]{3}$/.test(currency)) errors.currency = 'must be an ISO 4217 code in upper case';
  if (Object.keys(errors).length > 0) throw new ValidationError('invalid checkout amount', errors);
}
