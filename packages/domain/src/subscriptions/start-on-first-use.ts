import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/**
 * A subscription whose term starts on first use (an import's "on hold", docs/import.md): it
 * serves with no expiry while `starts_on_first_use_seconds` is set; the usage ingest starts the
 * term with the first traffic it credits (expires_at = then + term, in the same statement), and
 * this sweep step starts it at `start_by` for one that was not used by then
 * (expires_at = start_by + term). Either way the subscription's nodes get a new revision (the
 * expiry is in their desired state). Returns how many it started (call again while it returns `batch`).
 */
export async function startDueTerms(ctx: DomainContext, batch = 500): Promise<number> {
  return unitOfWork(
    ctx,
    async (uow) => {
      const trx = uow.db;
      const now = ctx.clock.now();
      const due = await trx
        .selectFrom('subscriptions')
        .select(['id', 'start_by', 'starts_on_first_use_seconds'])
        .where('start_by', '<=', now)
        .where('starts_on_first_use_seconds', 'is not', null)
        .orderBy('id')
        .limit(batch)
        .forUpdate()
        .skipLocked()
        .execute();
      if (due.length === 0) return 0;
      uow.subscriptionLinksChanged();
      for (const r of due) {
        const expiresAt = new Date((r.start_by as Date).getTime() + Number(r.starts_on_first_use_seconds) * 1000);
        await trx
          .updateTable('subscriptions')
          .set({ expires_at: expiresAt, starts_on_first_use_seconds: null, start_by: null, updated_at: now })
          .where('id', '=', r.id)
          .execute();
        uow.audit({
          action: 'subscription.term_started',
          entity_type: 'subscription',
          entity_id: r.id,
          details: { how: 'start_by', expires_at: expiresAt.toISOString() },
        });
      }
      // The new expiries reach the nodes (UserLimits.not_after_ms: they cut at it while the control plane is away).
      await bumpNodeRevisions(
        uow,
        await nodesOfSubscriptions(
          trx,
          due.map((r) => r.id),
        ),
      );
      return due.length;
    },
    { attempts: 3 },
  );
}
