import { CutoffReason, type UserLimits } from '@svc/proto';

/**
 * When a user is no longer entitled to be served (UserLimits, issue 36.3), decided on the node
 * alone, so that it holds while the control plane is away:
 * - time: not_after_ms (a control-plane time, 0 = no end) has come on the agent's estimate of
 *   the control plane's clock (server-clock.ts);
 * - slice: slice_id is not 0 and the bytes counted against that slice (up and down, from when
 *   the agent first applied slice_id) reached slice_bytes. A slice of 0 bytes is nothing left.
 * Time is looked at first: a user past both is reported as CUTOFF_TIME.
 *
 * A cut user stays cut (the latch) for as long as its limits are the ones it was cut under:
 * a ServerClock that moves the estimate back, or a count that could not grow, lifts nothing.
 * It is served again once its UserLimits change so that the rule entitles it (a new slice_id,
 * a larger slice, a not_after_ms in the future) or once it has no limits at all.
 */
export interface Entitlement {
  notAfterMs: bigint;
  sliceId: bigint;
  sliceBytes: bigint;
}

export function cutReason(limits: Entitlement, usedBytes: bigint, nowMs: number): CutoffReason | null {
  if (limits.notAfterMs > 0n && BigInt(Math.floor(nowMs)) >= limits.notAfterMs) return CutoffReason.CUTOFF_TIME;
  if (limits.sliceId !== 0n && usedBytes >= limits.sliceBytes) return CutoffReason.CUTOFF_SLICE;
  return null;
}

/** Whether the limits bound the user at all (a time or a slice): users without are never looked at. */
export const bounded = (l: Entitlement): boolean => l.notAfterMs > 0n || l.sliceId !== 0n;

export const sameEntitlement = (a: Entitlement, b: Entitlement): boolean =>
  a.notAfterMs === b.notAfterMs && a.sliceId === b.sliceId && a.sliceBytes === b.sliceBytes;

/**
 * Whether a user cut under `cutUnder` stays cut now that its limits are `limits` (undefined: it
 * has none, or is no longer in the desired state).
 */
export function staysCut(cutUnder: Entitlement, limits: UserLimits | Entitlement | undefined, usedBytes: bigint, nowMs: number): boolean {
  if (!limits || !bounded(limits)) return false;
  if (sameEntitlement(cutUnder, limits)) return true;
  return cutReason(limits, usedBytes, nowMs) !== null;
}
