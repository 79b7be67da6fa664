import { recordEvents } from '../events/record-event.ts';
import { bumpNodeRevisions, nodesOfSubscriptions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { newCredentials } from './credentials.ts';
import { lockSubscription } from './lock-subscription.ts';
import { subscriptionChangeEvents } from './subscription-events.ts';
import { countersOf } from './subscription-rows.ts';
import { currentStatus } from './subscription-status.ts';
import { groupIdsOf, type SubscriptionView, subscriptionView } from './subscription-view.ts';

/**
 * New uuids, passwords and link token: the old link stops resolving at once (its hash is
 * gone), and so do the links of the panel it was imported from (imported_users.links_retired_at),
 * and the nodes of the subscription's inbounds get a new revision to swap the users.
 */
export async function rotateSubscriptionCredentials(ctx: DomainContext, id: string): Promise<SubscriptionView> {
  const { credentials } = newCredentials(ctx.secrets);
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    uow.subscriptionLinksChanged();
    const current = await lockSubscription(trx, id);
    const now = ctx.clock.now();
    const status = currentStatus(current, now);
    const row = await trx
      .updateTable('subscriptions')
      .set({ ...credentials, credentials_rotated_at: now, status, updated_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .then((r) => ({ ...r, ...countersOf(current) }));
    const retired = await trx
      .updateTable('imported_users')
      .set({ links_retired_at: now })
      .where('subscription_id', '=', id)
      .where('links_retired_at', 'is', null)
      .executeTakeFirst();
    const bumped = await bumpNodeRevisions(uow, await nodesOfSubscriptions(trx, [id]));
    uow.audit({
      action: 'subscription.credentials_rotated',
      entity_type: 'subscription',
      entity_id: id,
      details: {
        ...(status !== current.status ? { status: { from: current.status, to: status } } : {}),
        ...(Number(retired.numUpdatedRows) > 0 ? { imported_links_retired: true } : {}),
        nodes_bumped: bumped,
      },
    });
    await recordEvents(
      uow,
      [
        { type: 'subscription.credentials_rotated', payload: { subscription_id: id, client_id: row.client_id } },
        ...subscriptionChangeEvents({ id, client_id: row.client_id, from: current, to: row }),
      ],
      now,
    );
    return subscriptionView(ctx, row, (await groupIdsOf(trx, [id])).get(id) ?? [], now);
  });
}
