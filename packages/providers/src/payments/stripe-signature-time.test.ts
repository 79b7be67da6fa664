import { describe, expect, it } from 'vitest';
import { STRIPE_SIGNATURE_TOLERANCE_SECONDS, stripeSignedAt, stripeTimestampRefusal } from './stripe-signature-time.ts';

const NOW = new Date('2026-11-29T12:00:00Z');
const now = NOW.getTime() / 1000;

describe('the Stripe-Signature timestamp is bounded both ways (300 s)', () => {
  it('is read as the stripe package reads it: the last t=, parseInt', () => {
    expect(stripeSignedAt(`t=${now},v1=ab`)).toBe(now);
    expect(stripeSignedAt(`t=1,v1=ab,t=${now}`)).toBe(now);
    expect(stripeSignedAt(`t=${now}xyz,v1=ab`)).toBe(now);
    expect(stripeSignedAt('v1=ab')).toBeNaN();
  });

  it.each([
    [-STRIPE_SIGNATURE_TOLERANCE_SECONDS, undefined],
    [STRIPE_SIGNATURE_TOLERANCE_SECONDS, undefined],
    [0, undefined],
    [-STRIPE_SIGNATURE_TOLERANCE_SECONDS - 1, 'stale'],
    [STRIPE_SIGNATURE_TOLERANCE_SECONDS + 1, 'future'],
    [600, 'future'],
    [-600, 'stale'],
  ])('a timestamp %i s from our clock: %s', (skew, reason) => {
    expect(stripeTimestampRefusal(`t=${now + skew},v1=ab`, NOW)?.reason).toBe(reason);
  });

  it('no timestamp, or one that is not a number, is refused', () => {
    expect(stripeTimestampRefusal('t=abc,v1=ab', NOW)?.reason).toBe('bad-signature');
    expect(stripeTimestampRefusal('v1=ab', NOW)?.reason).toBe('bad-signature');
  });
});
