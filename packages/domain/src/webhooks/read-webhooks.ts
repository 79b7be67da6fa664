import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type WebhookDeliveryView, type WebhookView, webhookDeliveryReadView, webhookReadView } from './webhook-view.ts';

/** The actor decides what a read shows (webhookReadView: a viewer gets no query token, no receiver's answer). */
type Ctx = Pick<DomainContext, 'db' | 'actor'>;

/** Oldest first, by id. */
export async function listWebhooks(ctx: Ctx, page: PageRequest): Promise<Page<WebhookView>> {
  const rows = await keysetRows(ctx.db.selectFrom('webhook_endpoints').selectAll(), page);
  return toPage(rows, page.limit, (r) => webhookReadView(ctx.actor, r));
}

export async function getWebhook(ctx: Ctx, id: string): Promise<WebhookView> {
  const row = await ctx.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('webhook', id);
  return webhookReadView(ctx.actor, row);
}

export interface WebhookDeliveryFilter extends PageRequest {
  status?: 'pending' | 'succeeded' | 'failed' | undefined;
}

/** One endpoint's delivery log, newest first; 404 for an unknown endpoint. */
export async function listWebhookDeliveries(ctx: Ctx, webhookId: string, f: WebhookDeliveryFilter): Promise<Page<WebhookDeliveryView>> {
  await getWebhook(ctx, webhookId);
  let q = ctx.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', webhookId);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  const rows = await keysetRows(q, f, { newest: true });
  return toPage(rows, f.limit, (r) => webhookDeliveryReadView(ctx.actor, r));
}
