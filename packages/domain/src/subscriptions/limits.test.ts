import { describe, expect, it } from 'vitest';
import { nextPeriodStart, periodStart } from './limits.ts';

describe('renewal periods (UTC)', () => {
  const at = new Date('2026-12-31T23:59:59.999Z'); // a Thursday, the last moment of a year
  it('the next reset is where the next period starts: the next midnight, Monday, 1st of the month; never for no_reset', () => {
    expect(nextPeriodStart('day', at)?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(nextPeriodStart('week', at)?.toISOString()).toBe('2027-01-04T00:00:00.000Z');
    expect(nextPeriodStart('month', at)?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(nextPeriodStart('no_reset', at)).toBeNull();
  });

  it('at the very start of a period the reset is a whole period away, and it is always the start of the following period', () => {
    const monthStart = new Date('2027-02-01T00:00:00Z');
    expect(nextPeriodStart('month', monthStart)?.toISOString()).toBe('2027-03-01T00:00:00.000Z');
    for (const renewal of ['day', 'week', 'month'] as const)
      for (let i = 0; i < 400; i++) {
        const now = new Date(Date.UTC(2026, 0, 1) + i * 86_400_000 * 1.37);
        const next = nextPeriodStart(renewal, now) as Date;
        expect(next.getTime()).toBeGreaterThan(now.getTime());
        expect(periodStart(renewal, next)?.getTime()).toBe(next.getTime());
        expect(periodStart(renewal, new Date(next.getTime() - 1))?.getTime()).toBe(periodStart(renewal, now)?.getTime());
      }
  });
});
