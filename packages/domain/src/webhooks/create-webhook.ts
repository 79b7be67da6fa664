import { z } from 'zod';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { auditableUrl, WebhookDescription, WebhookEventTypes, WebhookUrl } from './webhook-fields.ts';
import { newWebhookSecret, type WebhookWithSecret, webhookView } from './webhook-view.ts';

/** POST /webhooks: the secret is ours (generated), returned once in this answer. */
export const CreateWebhookInput = z
  .object({
    url: WebhookUrl,
    description: WebhookDescription.default(''),
    event_types: WebhookEventTypes.default(null),
    enabled: z.boolean().default(true),
  })
  .strict()
  .brand<'CreateWebhookInput'>();
export type CreateWebhookInput = z.output<typeof CreateWebhookInput>;

export async function createWebhook(ctx: DomainContext, input: CreateWebhookInput): Promise<WebhookWithSecret> {
  const secret = newWebhookSecret();
  return unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const row = await uow.db
      .insertInto('webhook_endpoints')
      .values({
        id: newId('whk', now.getTime()),
        url: input.url,
        description: input.description,
        event_types: input.event_types === null ? null : JSON.stringify(input.event_types),
        enabled: input.enabled,
        secret_enc: ctx.secrets.seal(secret),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    uow.audit({
      action: 'webhook.created',
      entity_type: 'webhook',
      entity_id: row.id,
      details: { url: auditableUrl(row.url), event_types: row.event_types, enabled: row.enabled },
    });
    return { ...webhookView(row), secret };
  });
}
