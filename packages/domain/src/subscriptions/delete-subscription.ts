import { recordEvent } from '../events/record-event.ts';
import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { lockSubscription } from './lock-subscription.ts';

/**
 * Removes the subscription with its access-group links and usage rows (cascade); payments
 * keep their history with subscription_id set to null. Its nodes drop its users.
 */
export async function deleteSubscription(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    uow.subscriptionLinksChanged();
    const current = await lockSubscription(trx, id);
    const nodes = await nodesOfSubscriptions(trx, [id]);
    await trx.deleteFrom('subscriptions').where('id', '=', id).execute();
    const bumped = await bumpNodeRevisions(uow, nodes);
    uow.audit({
      action: 'subscription.deleted',
      entity_type: 'subscription',
      entity_id: id,
      details: { client_id: current.client_id, status: current.status, nodes_bumped: bumped },
    });
    await recordEvent(
      uow,
      { type: 'subscription.deleted', payload: { subscription_id: id, client_id: current.client_id, status: current.status } },
      ctx.clock.now(),
    );
  });
}
