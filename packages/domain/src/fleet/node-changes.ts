import type { Db } from '@svc/db';
import { type MessageBus, TOPICS } from '../shared/bus.ts';
import type { DomainDeps } from '../shared/context.ts';

/** Node ids a transaction marked changed, keyed by the transaction object kysely hands out. */
const pending = new WeakMap<object, Set<string>>();
/** Transactions that changed what some subscription link shows (token, status, credentials, client). */
const subscriptionsTouched = new WeakMap<object, { touched: boolean }>();

/** How many node ids one nodes.changed message carries (a 1,000-node change is one message). */
const IDS_PER_MESSAGE = 1000;

/**
 * Runs `fn` in one transaction and, once it has committed, announces the nodes it marked
 * changed (markNodesChanged) on the bus, so every gateway replica pushes to the streams it
 * holds (data flow 2). Nothing is announced when the transaction rolls back. A lost message
 * (a crash between commit and publish, a Redis outage) delays a push only until the
 * gateway's reconciliation reads the revisions again.
 */
export async function inTransaction<T>(deps: Pick<DomainDeps, 'db' | 'bus' | 'log'>, fn: (trx: Db) => Promise<T>): Promise<T> {
  const changed = new Set<string>();
  const subscriptions = { touched: false };
  const result = await deps.db.transaction().execute(async (trx) => {
    pending.set(trx, changed);
    subscriptionsTouched.set(trx, subscriptions);
    return fn(trx);
  });
  if (changed.size > 0) await announceNodesChanged(deps, [...changed]);
  if (subscriptions.touched) {
    try {
      await deps.bus.publish(TOPICS.subscriptionsChanged, {});
    } catch (err) {
      deps.log.warn({ err }, 'subscriptions.changed not published; cached subscription links expire within their age limit');
    }
  }
  return result;
}

/**
 * Records, inside an inTransaction, that what some subscription link shows changed (its token,
 * status, credentials or client): after commit `subscriptions.changed` tells every process
 * caching link answers to drop them (a rotated token must stop working at once).
 */
export function markSubscriptionsChanged(trx: Db): void {
  const flag = subscriptionsTouched.get(trx);
  if (!flag) throw new Error('markSubscriptionsChanged outside inTransaction: cached links would keep the old state');
  flag.touched = true;
}

/** Records, inside an inTransaction, that these nodes must be told (their desired state or admission changed). */
export function markNodesChanged(trx: Db, nodeIds: Iterable<string>): void {
  const set = pending.get(trx);
  if (!set) throw new Error('markNodesChanged outside inTransaction: the change would reach its nodes only at the next reconciliation');
  for (const id of nodeIds) set.add(id);
}

/** Publishes nodes.changed; a bus failure is logged, never undoes the committed change. */
export async function announceNodesChanged(deps: { bus: MessageBus; log: DomainDeps['log'] }, nodeIds: readonly string[]): Promise<void> {
  for (let i = 0; i < nodeIds.length; i += IDS_PER_MESSAGE) {
    const ids = nodeIds.slice(i, i + IDS_PER_MESSAGE);
    try {
      await deps.bus.publish(TOPICS.nodesChanged, { ids });
    } catch (err) {
      deps.log.warn({ err, nodes: ids.length }, 'nodes.changed not published; the gateway reconciliation will pick the change up');
    }
  }
}
