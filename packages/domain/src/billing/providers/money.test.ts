import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimalToMinor, minorToDecimal } from './money.ts';

describe('minor units <-> provider decimals', () => {
  it("writes the currency's own number of decimals", () => {
    expect(minorToDecimal(99000, 'RUB')).toBe('990.00');
    expect(minorToDecimal(5, 'USD')).toBe('0.05');
    expect(minorToDecimal(500, 'JPY')).toBe('500');
    expect(minorToDecimal(1234, 'KWD')).toBe('1.234');
  });

  it('reads decimals back, refusing what is not a plain amount of that currency', () => {
    expect(decimalToMinor('990.00', 'RUB')).toBe(99000);
    expect(decimalToMinor('4.9', 'USD')).toBe(490);
    expect(decimalToMinor('500', 'JPY')).toBe(500);
    for (const bad of ['4.999', '-1', '1e3', '', ' 1', 'NaN', null, {}, '0x10']) expect(decimalToMinor(bad, 'USD')).toBeUndefined();
  });

  it('round-trips every amount', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999_999_999_999_999 }), fc.constantFrom('USD', 'JPY', 'KWD'), (amount, currency) => {
        expect(decimalToMinor(minorToDecimal(amount, currency), currency)).toBe(amount);
      }),
    );
  });
});
