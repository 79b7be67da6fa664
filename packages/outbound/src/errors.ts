import type { AddressClass } from './address.ts';

/**
 * Why an outbound call did not get an answer:
 * - `refused`: the destination is outside the policy (its class says which); no packet was sent;
 * - `not-https`: the caller asked for https only and the URL (or a redirect) is not;
 * - `unreachable`: every failure before an HTTP answer (no DNS answer, refused, reset, closed,
 *   TLS, no answer in time). One reason on purpose: which of them happened maps ports of
 *   internal hosts, so it goes to the log (`detail`), never to an API answer;
 * - `too-large`: the answer passed the size limit;
 * - `redirect`: a redirect to another origin, or more redirects than allowed;
 * - `aborted`: the caller gave up (a job's deadline).
 */
export type OutboundFailureReason = 'refused' | 'not-https' | 'unreachable' | 'too-large' | 'redirect' | 'aborted';

export class OutboundError extends Error {
  override readonly name = 'OutboundError';
  constructor(
    readonly reason: OutboundFailureReason,
    /** For the log only: the connection-level detail (ECONNREFUSED, timeout, the address class). */
    readonly detail: string,
    /** `refused`: the class of the address that was refused. */
    readonly addressClass?: AddressClass,
    /**
     * `unreachable` because no answer came in time. For callers whose destinations the
     * configuration names (a payment API's 504); never for text an admin reads about a
     * destination an admin named, where it would tell silent ports from closed ones.
     */
    readonly timedOut = false,
  ) {
    super(`${reason}: ${detail}`);
  }
}

/** An OutboundError by shape (the error may come through another copy of this package). */
export const isOutboundError = (err: unknown): err is OutboundError =>
  typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'OutboundError' && 'reason' in err;
