import { recordEvents } from '../events/record-event.ts';
import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { subscriptionChangeEvents } from './subscription-events.ts';
import { CLOCK_EXPIRES } from './subscription-status.ts';

/**
 * Writes down expiries that time alone has caused: subscriptions stored as active or
 * limited whose expires_at has passed become expired, and their nodes get a new revision
 * so they drop those users. Reads already show them as expired; this is for the nodes.
 * Meant to run periodically (as the system actor), a batch at a time; returns how many
 * it expired (call again while it returns `batch`).
 */
export async function expireDueSubscriptions(ctx: DomainContext, batch = 500): Promise<number> {
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const now = ctx.clock.now();
    const due = await trx
      .selectFrom('subscriptions')
      .innerJoin('subscription_counters as sc', 'sc.subscription_id', 'subscriptions.id')
      .select(['id', 'client_id', 'status', 'expires_at', 'sc.used_bytes', 'traffic_limit_bytes'])
      .where('status', 'in', CLOCK_EXPIRES)
      .where('expires_at', '<=', now)
      .orderBy('id')
      .limit(batch)
      .forUpdate('subscriptions')
      .skipLocked()
      .execute();
    if (due.length === 0) return 0;
    uow.subscriptionLinksChanged();
    const ids = due.map((r) => r.id);
    await trx.updateTable('subscriptions').set({ status: 'expired', updated_at: now }).where('id', 'in', ids).execute();
    await bumpNodeRevisions(uow, await nodesOfSubscriptions(trx, ids));
    for (const r of due) {
      uow.audit({
        action: 'subscription.expired',
        entity_type: 'subscription',
        entity_id: r.id,
        details: { status: { from: r.status, to: 'expired' } },
      });
    }
    await recordEvents(
      uow,
      due.flatMap((r) => subscriptionChangeEvents({ id: r.id, client_id: r.client_id, from: r, to: { ...r, status: 'expired' } })),
      now,
    );
    return due.length;
  });
}
