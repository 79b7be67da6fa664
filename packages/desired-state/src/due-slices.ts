import { mayBeDueSlices, type NodeSliceState } from '@svc/domain';
import { deltaOf } from './group-models.ts';
import type { ModelSubscription } from './model.ts';

interface Due {
  /** The clock reading (epoch ms) it was found at. */
  at: number;
  halfUsed: ReadonlySet<string>;
  /** The members a slice may be due for then. */
  due: readonly ModelSubscription[];
}

/** Per members array, per slices map (one per node: read-slices.ts keeps a node's map while its slices are unchanged). */
const found = new WeakMap<readonly ModelSubscription[], WeakMap<object, Due>>();

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>) => {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
};

/**
 * mayBeDueSlices(members, node, now) (packages/domain: the rule), kept with the members array
 * and the node's slices map: a member that was not due at an earlier clock reading, with the same
 * slices and the same half-used ones, is not due later either (no traffic limit, a slice not half
 * used, or an expiry already passed: none of them undone by time). So a later snapshot with the
 * same array asks the rule again only about the members that were due, and one whose array
 * group-models.ts made from the one before (deltaOf) only about those and the members that came:
 * a few instead of 100,000 on a big node, every snapshot. The same ids as mayBeDueSlices over all
 * members, in no particular order (due-slices.test.ts).
 */
export function dueSlicesOf(members: readonly ModelSubscription[], node: NodeSliceState, now: Date): string[] {
  // A node that does not charge is due none (the rule's first answer): nothing to keep.
  if (!(node.multiplier > 0)) return [];
  const t = now.getTime();
  const slices = node.slices as object;
  const usable = (d: Due | undefined): d is Due => d !== undefined && d.at <= t && sameSet(d.halfUsed, node.halfUsed);
  let candidates: readonly ModelSubscription[] | undefined;
  const same = found.get(members)?.get(slices);
  if (usable(same)) candidates = same.due;
  else {
    const delta = deltaOf(members);
    const before = delta && found.get(delta.base)?.get(slices);
    if (delta && usable(before)) {
      const went = new Set(delta.went);
      candidates = [...before.due.filter((m) => !went.has(m)), ...delta.came];
    }
  }
  const asked = candidates ?? members;
  const due = mayBeDueSlices(asked, node, now);
  // Kept as members (the rule is asked about them again); few, usually none.
  const ids = new Set(due);
  const dueMembers = due.length ? asked.filter((m) => ids.has(m.id)) : [];
  let perSlices = found.get(members);
  if (!perSlices) {
    perSlices = new WeakMap();
    found.set(members, perSlices);
  }
  perSlices.set(slices, { at: t, halfUsed: new Set(node.halfUsed), due: dueMembers });
  return due;
}
