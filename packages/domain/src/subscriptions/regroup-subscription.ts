import { graceSubscriptionGroups } from '../fleet/serving.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { setSubscriptionGroups } from './access-groups.ts';

/**
 * Replaces a subscription's access groups with `next` (an admin's PATCH, a paid plan) and
 * returns them deduplicated and sorted. The nodes of the groups it leaves may still send what it
 * used there: those groups keep counting its usage for the grace period.
 */
export async function regroupSubscription(
  uow: UnitOfWork,
  now: Date,
  id: string,
  before: readonly string[],
  next: readonly string[],
): Promise<string[]> {
  await setSubscriptionGroups(uow.db, id, next);
  const groups = [...new Set(next)].sort();
  await graceSubscriptionGroups(
    uow,
    now,
    id,
    before.filter((g) => !groups.includes(g)),
  );
  return groups;
}
