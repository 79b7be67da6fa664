/**
 * When an ACME certificate is renewed, and how soon a failed attempt is tried again (issue 16
 * item 3; docs/certificates.md). One rule, used by issuance and by the view.
 */

const DAY_MS = 86_400_000;
/** Renew this long before expiry (Let's Encrypt's 90-day certificates: after 60 days). */
export const RENEW_BEFORE_DAYS = 30;

/**
 * When the renewal of a certificate valid from `notBefore` to `notAfter` is due: 30 days before
 * expiry, but never before half of its lifetime has passed (a short-lived certificate, 6 or 45
 * days, is otherwise renewed again as soon as it is issued).
 */
export function renewalDueAt(notBefore: Date, notAfter: Date): Date {
  const lifetime = notAfter.getTime() - notBefore.getTime();
  const before = Math.min(RENEW_BEFORE_DAYS * DAY_MS, lifetime / 2);
  return new Date(notAfter.getTime() - before);
}

/**
 * When a certificate issued `now` is renewed next: renewalDueAt, but not within the hour (a
 * clock far ahead of the CA's would otherwise find every new certificate due at once and order
 * one after another).
 */
export function nextRenewalAt(notBefore: Date, notAfter: Date, now: Date): Date {
  return new Date(Math.max(renewalDueAt(notBefore, notAfter).getTime(), now.getTime() + 3_600_000));
}

/** After `failures` failed attempts in a row: 1 h, 2 h, 4 h ... at most 24 h (a CA limits failed validations per hour). */
export function retryAfterMs(failures: number): number {
  return Math.min(24, 2 ** Math.max(0, Math.min(failures - 1, 10))) * 3_600_000;
}

/** A worker's claim on an issuance older than this is taken over (the worker died mid-way). */
export const ISSUING_CLAIM_STALE_MS = 15 * 60_000;

/**
 * How old a claim must be to be taken over with this propagation wait: 15 minutes, or the
 * wait plus 10 minutes for the CA when the wait is set longer (an attempt still running is
 * never taken over and ordered twice).
 */
export const claimStaleMs = (propagationTimeoutSeconds: number): number =>
  Math.max(ISSUING_CLAIM_STALE_MS, (propagationTimeoutSeconds + 600) * 1000);
