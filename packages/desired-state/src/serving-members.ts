import { statusClockChangesAt, storedStatusAsOf, subscriptionServes } from '@svc/domain';
import { userEmail } from '@svc/proto';
import { deltaOf } from './group-models.ts';
import type { ModelSubscription } from './model.ts';
import { lowerBound, SPLICE_UP_TO } from './sorted.ts';

/** A subscription that serves now, with its user's email. */
export interface ServingMember {
  email: string;
  sub: ModelSubscription;
}

/**
 * What the compiler derives from a node's members and the clock (compile.ts): who serves, in
 * email order; those of them with a user_limits entry, in id order; until when that holds; and
 * the inbound list every one of them is granted, when they share one.
 */
export interface ServingMembers {
  /** The clock reading (epoch ms) this was derived at. */
  readonly at: number;
  /** compiledUntilMs: the earliest expiry still ahead of a serving member (Infinity: none). For any clock in [at, untilMs) this is what deriving again gives. */
  readonly untilMs: number;
  /** The members that serve now (stored status as of the clock active, client active), in email order. */
  readonly serving: readonly ServingMember[];
  /** The serving members that have a user_limits entry (a device limit, a speed cap, an expiry or a traffic limit), in id order. */
  readonly limited: readonly ModelSubscription[];
  /** The inbound list every serving member holds (the same ids in the same order: one access group), or null. */
  readonly sharedInboundIds: readonly string[] | null;
}

/** Whether a serving member gets a user_limits entry (compile.ts userLimitsOf). */
export const hasUserLimits = (sub: ModelSubscription): boolean =>
  (sub.device_limit ?? null) !== null ||
  (sub.upload_bps ?? null) !== null ||
  (sub.download_bps ?? null) !== null ||
  sub.expires_at !== null ||
  sub.traffic_limit_bytes !== null;

const serves = (sub: ModelSubscription, now: Date) => subscriptionServes(storedStatusAsOf(sub, now), sub.client_status);

/** Ids and emails compare as strings, code unit by code unit (never locale-aware: the order must not depend on the machine). */
export const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const derived = new WeakMap<readonly ModelSubscription[], ServingMembers>();

/**
 * ServingMembers of `members` at `now`. Members are never changed once made (model.ts), so what
 * was derived from an array of them holds for that array until its untilMs: it is kept with the
 * array (the member cache hands one node after another, and one push after the next, the same
 * array while the group is unchanged). An array that group-models.ts made from the one before by
 * taking some members out and putting others in (deltaOf) gets what was derived from that one,
 * with those members taken out and put in: a one-user change of a 100,000-member group is a
 * few binary searches and array copies instead of five passes over 100,000 members and two sorts.
 * Either way the result is exactly what deriving from scratch gives (serving-members.test.ts).
 */
export function servingMembersOf(members: readonly ModelSubscription[], now: Date): ServingMembers {
  const t = now.getTime();
  const kept = derived.get(members);
  if (kept && kept.at <= t && t < kept.untilMs) return kept;
  const delta = deltaOf(members);
  const before = delta && derived.get(delta.base);
  const made =
    (before && before.at <= t && t < before.untilMs && delta.went.length + delta.came.length <= SPLICE_UP_TO
      ? withChanges(before, delta.went, delta.came, now)
      : undefined) ?? fromScratch(members, now);
  derived.set(members, made);
  return made;
}

function fromScratch(members: readonly ModelSubscription[], now: Date): ServingMembers {
  const serving: ServingMember[] = [];
  let untilMs = Number.POSITIVE_INFINITY;
  let shared: readonly string[] | null | undefined;
  for (const sub of members) {
    if (!serves(sub, now)) continue;
    serving.push({ email: userEmail(sub.id), sub });
    const at = statusClockChangesAt(sub, now);
    if (at !== null && at < untilMs) untilMs = at;
    if (shared === undefined) shared = sub.inbound_ids;
    else if (shared !== null && !sameIds(shared, sub.inbound_ids)) shared = null;
  }
  serving.sort((a, b) => byString(a.email, b.email));
  const limited: ModelSubscription[] = [];
  for (const { sub } of serving) if (hasUserLimits(sub)) limited.push(sub);
  // Serving is in email order, which is id order for ids of one length: then this is one pass.
  limited.sort((a, b) => byString(a.id, b.id));
  return { at: now.getTime(), untilMs, serving, limited, sharedInboundIds: shared ?? null };
}

/** `before` with the members that went taken out and those that came (and serve at `now`) put in; undefined when `before` does not hold one that went. */
function withChanges(
  before: ServingMembers,
  went: readonly ModelSubscription[],
  came: readonly ModelSubscription[],
  now: Date,
): ServingMembers | undefined {
  const serving = before.serving.slice();
  const limited = before.limited.slice();
  let untilMs = before.untilMs;
  let untilLeft = false;
  for (const sub of went) {
    // A member that served then is in both arrays at its place; one that did not is in neither.
    const email = userEmail(sub.id);
    const at = lowerBound(serving, email, (m) => m.email);
    if (serving[at]?.sub !== sub) {
      if (serving[at]?.email === email) return undefined;
      continue;
    }
    serving.splice(at, 1);
    if (statusClockChangesAt(sub, now) === untilMs) untilLeft = true;
    if (!hasUserLimits(sub)) continue;
    const k = lowerBound(limited, sub.id, (m) => m.id);
    if (limited[k] !== sub) return undefined;
    limited.splice(k, 1);
  }
  let shared = before.sharedInboundIds;
  for (const sub of came) {
    if (!serves(sub, now)) continue;
    const email = userEmail(sub.id);
    const at = lowerBound(serving, email, (m) => m.email);
    if (serving[at]?.email === email) return undefined;
    serving.splice(at, 0, { email, sub });
    const ahead = statusClockChangesAt(sub, now);
    if (ahead !== null && ahead < untilMs) untilMs = ahead;
    if (serving.length === 1) shared = sub.inbound_ids;
    else if (shared !== null && !sameIds(shared, sub.inbound_ids)) shared = null;
    if (hasUserLimits(sub))
      limited.splice(
        lowerBound(limited, sub.id, (m) => m.id),
        0,
        sub,
      );
  }
  // The member whose expiry ended `before` went: the earliest of those left is found again.
  if (untilLeft) {
    untilMs = Number.POSITIVE_INFINITY;
    for (const { sub } of serving) {
      const at = statusClockChangesAt(sub, now);
      if (at !== null && at < untilMs) untilMs = at;
    }
  }
  if (serving.length === 0) shared = null;
  return { at: now.getTime(), untilMs, serving, limited, sharedInboundIds: shared };
}

/**
 * Whether two inbound lists are the same ids in the same order. Members of one access group
 * share one array per snapshot; a member kept from an earlier snapshot holds that one's array.
 */
const sameIds = (a: readonly string[], b: readonly string[]): boolean => {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
};
