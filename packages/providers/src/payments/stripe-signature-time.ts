import { WebhookRefusedError } from '@svc/domain';

/** Seconds a Stripe-Signature timestamp may be from our clock, either way (the tolerance of Stripe's own libraries). */
export const STRIPE_SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * The `t=` of a Stripe-Signature header read as the `stripe` package reads it (the last `t=`
 * item, parseInt), so it is the very timestamp its HMAC covered; NaN when there is none.
 */
export function stripeSignedAt(header: string): number {
  let t = Number.NaN;
  for (const item of header.split(',')) {
    const [key, value] = item.split('=');
    if (key === 't') t = Number.parseInt(value ?? '', 10);
  }
  return t;
}

/**
 * The timestamp bound both ways, after the signature verified. `stripe.webhooks.constructEvent`
 * only refuses an old timestamp (now - t > tolerance): one dated ahead, or not a number at all
 * (its age is NaN, which compares false), passes it. A delivery dated ahead of our clock by more
 * than the tolerance is not one Stripe just sent.
 */
export function stripeTimestampRefusal(header: string, now: Date, provider = 'Stripe'): WebhookRefusedError | undefined {
  const t = stripeSignedAt(header);
  if (!Number.isSafeInteger(t)) return new WebhookRefusedError(provider, 'bad-signature', 'the Stripe-Signature has no timestamp');
  const skew = t - Math.floor(now.getTime() / 1000);
  if (skew < -STRIPE_SIGNATURE_TOLERANCE_SECONDS)
    return new WebhookRefusedError(provider, 'stale', `the signature timestamp is older than ${STRIPE_SIGNATURE_TOLERANCE_SECONDS} s`);
  if (skew > STRIPE_SIGNATURE_TOLERANCE_SECONDS)
    return new WebhookRefusedError(
      provider,
      'future',
      `the signature timestamp is more than ${STRIPE_SIGNATURE_TOLERANCE_SECONDS} s ahead of our clock`,
    );
  return undefined;
}
