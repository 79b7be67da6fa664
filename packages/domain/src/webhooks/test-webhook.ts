import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { JOBS } from '../shared/jobs.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { newDelivery, WEBHOOK_TEST_EVENT } from './webhook-envelope.ts';
import { type WebhookDeliveryView, webhookDeliveryView } from './webhook-view.ts';

/**
 * POST /webhooks/{id}/test: a `webhook.test` delivery to this endpoint alone (enabled or not,
 * whatever it subscribes to), signed and retried like any other; its outcome shows in the
 * delivery log.
 */
export async function testWebhook(ctx: DomainContext, id: string): Promise<WebhookDeliveryView> {
  return unitOfWork(ctx, async (uow) => {
    const endpoint = await uow.db.selectFrom('webhook_endpoints').select('id').where('id', '=', id).executeTakeFirst();
    if (!endpoint) throw new NotFoundError('webhook', id);
    const now = ctx.clock.now();
    const eventId = newId('evt', now.getTime());
    const row = await uow.db
      .insertInto('webhook_deliveries')
      .values(
        newDelivery(
          id,
          { id: eventId, type: WEBHOOK_TEST_EVENT, version: 1, occurred_at: now.toISOString(), data: { webhook_id: id } },
          now,
        ),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    uow.audit({ action: 'webhook.tested', entity_type: 'webhook', entity_id: id, details: { delivery_id: row.id } });
    uow.enqueue(JOBS.webhooksDeliver, { id: row.id });
    return webhookDeliveryView(row);
  });
}
