import { writeAudit } from '../audit/write-audit.ts';
import { inTransaction, markSubscriptionsChanged } from '../fleet/node-changes.ts';
import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';

/**
 * Writes down expiries that time alone has caused: subscriptions stored as active or
 * limited whose expires_at has passed become expired, and their nodes get a new revision
 * so they drop those users. Reads already show them as expired; this is for the nodes.
 * Meant to run periodically (as the system actor), a batch at a time; returns how many
 * it expired (call again while it returns `batch`).
 */
export async function expireDueSubscriptions(ctx: DomainContext, batch = 500): Promise<number> {
  return inTransaction(ctx, async (trx) => {
    const now = ctx.clock.now();
    const due = await trx
      .selectFrom('subscriptions')
      .select(['id', 'status'])
      .where('status', 'in', ['active', 'limited'])
      .where('expires_at', '<=', now)
      .orderBy('id')
      .limit(batch)
      .forUpdate()
      .skipLocked()
      .execute();
    if (due.length === 0) return 0;
    markSubscriptionsChanged(trx);
    const ids = due.map((r) => r.id);
    await trx.updateTable('subscriptions').set({ status: 'expired', updated_at: now }).where('id', 'in', ids).execute();
    await bumpNodeRevisions(trx, await nodesOfSubscriptions(trx, ids));
    for (const r of due) {
      await writeAudit(trx, ctx, {
        action: 'subscription.expired',
        entity_type: 'subscription',
        entity_id: r.id,
        details: { status: { from: r.status, to: 'expired' } },
      });
    }
    return due.length;
  });
}
