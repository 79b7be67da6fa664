import type { Db } from '@svc/db';
import type { UnitOfWork } from '../shared/unit-of-work.ts';

/**
 * Which subscriptions a node serves (issue 12.4): those granted an access group that grants an
 * inbound of the node (nodesOfSubscriptions in revisions.ts, seen from the node; the
 * desired-state loader compiles the same join). Usage a node reports is credited only for
 * those, or for links removed less than SERVED_GRACE_MS ago: the agent applies the change
 * within seconds, but what it counted before is reported with its next report, or later when
 * the stream was down meanwhile.
 */
export const SERVED_GRACE_MS = 15 * 60_000;

/**
 * The access groups whose members `nodeId` serves at `now`: granting one of its inbounds, or
 * carried by it within the grace. A subquery for the usage ingest's crediting statement.
 */
export function accessGroupsServedBy(trx: Db, nodeId: string, now: Date) {
  return trx
    .selectFrom('access_group_inbounds as g')
    .innerJoin('inbounds as i', 'i.id', 'g.inbound_id')
    .select('g.access_group_id')
    .where('i.node_id', '=', nodeId)
    .union(trx.selectFrom('node_group_grace').select('access_group_id').where('node_id', '=', nodeId).where('until', '>', now));
}

/**
 * These nodes stop carrying these access groups (an inbound left a group, or moved off its
 * node): their members' usage from the nodes is still credited for the grace. Harmless when a
 * node still carries the group through another inbound. Expired rows go in the same unit.
 */
export async function graceNodeGroups(
  uow: UnitOfWork,
  now: Date,
  links: ReadonlyArray<{ node_id: string; access_group_id: string }>,
): Promise<void> {
  if (links.length === 0) return;
  await uow.db.deleteFrom('node_group_grace').where('until', '<=', now).execute();
  const until = new Date(now.getTime() + SERVED_GRACE_MS);
  await uow.db
    .insertInto('node_group_grace')
    .values(uniqueBy(links, (l) => `${l.node_id}\u0000${l.access_group_id}`).map((l) => ({ ...l, until })))
    .onConflict((oc) => oc.columns(['node_id', 'access_group_id']).doUpdateSet({ until }))
    .execute();
}

/** This subscription leaves these access groups: its usage from their nodes is still credited for the grace. */
export async function graceSubscriptionGroups(
  uow: UnitOfWork,
  now: Date,
  subscriptionId: string,
  groupIds: readonly string[],
): Promise<void> {
  if (groupIds.length === 0) return;
  await uow.db.deleteFrom('subscription_group_grace').where('until', '<=', now).execute();
  const until = new Date(now.getTime() + SERVED_GRACE_MS);
  await uow.db
    .insertInto('subscription_group_grace')
    .values([...new Set(groupIds)].map((access_group_id) => ({ subscription_id: subscriptionId, access_group_id, until })))
    .onConflict((oc) => oc.columns(['subscription_id', 'access_group_id']).doUpdateSet({ until }))
    .execute();
}

function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()];
}
