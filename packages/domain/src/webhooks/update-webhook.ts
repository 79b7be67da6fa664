import { z } from 'zod';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { getWebhook } from './read-webhooks.ts';
import { auditableUrl, WebhookDescription, WebhookEventTypes, WebhookUrl } from './webhook-fields.ts';
import { newWebhookSecret, type WebhookView, type WebhookWithSecret, webhookView } from './webhook-view.ts';

/** PATCH /webhooks/{id}: a merge; the secret changes only through rotate-secret. */
export const UpdateWebhookInput = z
  .object({
    url: WebhookUrl.optional(),
    description: WebhookDescription.optional(),
    event_types: WebhookEventTypes.optional(),
    enabled: z.boolean().optional(),
  })
  .strict()
  .brand<'UpdateWebhookInput'>();
export type UpdateWebhookInput = z.output<typeof UpdateWebhookInput>;

export async function updateWebhook(ctx: DomainContext, id: string, input: UpdateWebhookInput): Promise<WebhookView> {
  if (isEmptyPatch(input)) return getWebhook(ctx, id);
  return unitOfWork(ctx, async (uow) => {
    const current = await uow.db.selectFrom('webhook_endpoints').select('id').where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('webhook', id);
    const row = await uow.db
      .updateTable('webhook_endpoints')
      .set({
        ...(input.url !== undefined ? { url: input.url } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.event_types !== undefined ? { event_types: input.event_types === null ? null : JSON.stringify(input.event_types) } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
        updated_at: ctx.clock.now(),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const changed = Object.keys(input).filter((k) => input[k as keyof UpdateWebhookInput] !== undefined);
    uow.audit({
      action: 'webhook.updated',
      entity_type: 'webhook',
      entity_id: id,
      details: {
        changed,
        ...(input.url !== undefined ? { url: auditableUrl(row.url) } : {}),
        ...(input.event_types !== undefined ? { event_types: row.event_types } : {}),
        ...(input.enabled !== undefined ? { enabled: row.enabled } : {}),
      },
    });
    return webhookView(row);
  });
}

/** POST /webhooks/{id}/rotate-secret: a new secret at once (the old one stops signing), shown once. */
export async function rotateWebhookSecret(ctx: DomainContext, id: string): Promise<WebhookWithSecret> {
  const secret = newWebhookSecret();
  return unitOfWork(ctx, async (uow) => {
    const row = await uow.db
      .updateTable('webhook_endpoints')
      .set({ secret_enc: ctx.secrets.seal(secret), updated_at: ctx.clock.now() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new NotFoundError('webhook', id);
    uow.audit({ action: 'webhook.secret_rotated', entity_type: 'webhook', entity_id: id, details: {} });
    return { ...webhookView(row), secret };
  });
}
