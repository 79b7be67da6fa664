import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { auditableUrl } from './webhook-fields.ts';

/** DELETE /webhooks/{id}: the endpoint and its delivery log; pending deliveries are not attempted again. */
export async function deleteWebhook(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const row = await uow.db.deleteFrom('webhook_endpoints').where('id', '=', id).returning(['id', 'url']).executeTakeFirst();
    if (!row) throw new NotFoundError('webhook', id);
    uow.audit({ action: 'webhook.deleted', entity_type: 'webhook', entity_id: id, details: { url: auditableUrl(row.url) } });
  });
}
