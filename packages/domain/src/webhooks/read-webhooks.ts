import { NotFoundError } from '../errors.ts';
import type { DomainDeps } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type WebhookDeliveryView, type WebhookView, webhookDeliveryView, webhookView } from './webhook-view.ts';

type Ctx = Pick<DomainDeps, 'db'>;

/** Oldest first, by id. */
export async function listWebhooks(ctx: Ctx, page: PageRequest): Promise<Page<WebhookView>> {
  const rows = await keysetRows(ctx.db.selectFrom('webhook_endpoints').selectAll(), page);
  return toPage(rows, page.limit, webhookView);
}

export async function getWebhook(ctx: Ctx, id: string): Promise<WebhookView> {
  const row = await ctx.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('webhook', id);
  return webhookView(row);
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
  return toPage(rows, f.limit, webhookDeliveryView);
}
