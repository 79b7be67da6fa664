import type { PaymentStatus } from '@svc/db';
import { describe, expect, it } from 'vitest';
import { PROVIDER_PAYMENT_STATUSES, type ProviderPaymentStatus } from '../billing/providers/port.ts';
import { paymentTransition } from './payment-transition.ts';

const ALL: PaymentStatus[] = ['pending', 'succeeded', 'failed', 'expired', 'canceled', 'refunded'];

/** Applies reports in order, as the settle step does, and returns the end status and effect steps. */
function run(reports: ProviderPaymentStatus[]) {
  let status: PaymentStatus = 'pending';
  const effects: string[] = [];
  for (const r of reports) {
    const t = paymentTransition(status, r);
    if (!t) continue;
    status = t.status;
    if (t.effect !== 'none') effects.push(t.effect);
  }
  return { status, effects };
}

describe('payment state machine (docs/payments.md)', () => {
  it('pending is never reported back to, and a state reported again changes nothing', () => {
    for (const s of ALL) {
      expect(paymentTransition(s, 'pending')).toBeNull();
      if (s !== 'pending') expect(paymentTransition(s, s as ProviderPaymentStatus)).toBeNull();
    }
  });

  it('success applies the plan once; a refund of an applied payment takes it back; refunded is final', () => {
    expect(paymentTransition('pending', 'succeeded')).toEqual({ status: 'succeeded', effect: 'apply' });
    expect(paymentTransition('succeeded', 'refunded')).toEqual({ status: 'refunded', effect: 'revert' });
    for (const r of PROVIDER_PAYMENT_STATUSES) expect(paymentTransition('refunded', r)).toBeNull();
  });

  it('a success is final except for a refund: failure, expiry or cancellation after it are stale', () => {
    for (const r of ['failed', 'expired', 'canceled'] as const) expect(paymentTransition('succeeded', r)).toBeNull();
  });

  it('money arriving after failure, expiry or cancellation still buys the plan', () => {
    for (const s of ['failed', 'expired', 'canceled'] as const) {
      expect(paymentTransition(s, 'succeeded')).toEqual({ status: 'succeeded', effect: 'apply' });
    }
  });

  it('every order of the same reports ends in the same status with the plan applied at most once, net', () => {
    const reports: ProviderPaymentStatus[] = ['succeeded', 'refunded', 'failed', 'expired'];
    const orders = permutations(reports);
    const ends = new Set<string>();
    for (const order of orders) {
      const { status, effects } = run(order);
      ends.add(status);
      const net = effects.filter((e) => e === 'apply').length - effects.filter((e) => e === 'revert').length;
      expect(net, order.join(' > ')).toBe(0);
      expect(effects.filter((e) => e === 'apply').length, order.join(' > ')).toBeLessThanOrEqual(1);
    }
    expect([...ends]).toEqual(['refunded']);
    for (const order of permutations(['succeeded', 'failed', 'expired', 'canceled'] as ProviderPaymentStatus[])) {
      const { status, effects } = run(order);
      expect(status, order.join(' > ')).toBe('succeeded');
      expect(effects, order.join(' > ')).toEqual(['apply']);
    }
  });
});

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}
