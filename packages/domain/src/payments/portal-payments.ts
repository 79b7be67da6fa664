import type { PaymentRow } from '@svc/db';
import { NotFoundError } from '../errors.ts';
import { portalClient } from '../portal/portal-client.ts';
import type { PortalCtx } from '../portal/portal-subscriptions.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type CheckoutView, checkoutView } from './checkout-view.ts';

/** A payment as its customer sees it: the checkout's answer, when it was paid and why it ended as it did. */
export interface PortalPaymentView extends CheckoutView {
  paid_at: string | null;
  status_reason: string | null;
}

const portalPaymentView = (r: PaymentRow): PortalPaymentView => ({
  ...checkoutView(r),
  paid_at: r.paid_at?.toISOString() ?? null,
  status_reason: r.status_reason,
});

/** GET /portal/v1/payments: the client's own payments, oldest first (a pending one still carries its checkout URL). */
export async function portalPayments(ctx: PortalCtx, page: PageRequest): Promise<Page<PortalPaymentView & { id: string }>> {
  await portalClient(ctx, ctx.actor.id);
  const rows = await keysetRows(ctx.db.selectFrom('payments').selectAll().where('client_id', '=', ctx.actor.id), page);
  return toPage(rows, page.limit, (r) => ({ id: r.id, ...portalPaymentView(r) }));
}

/** GET /portal/v1/payments/{id}: one of the client's own payments; another client's reads like a missing one (404). */
export async function portalPayment(ctx: PortalCtx, id: string): Promise<PortalPaymentView & { id: string }> {
  await portalClient(ctx, ctx.actor.id);
  const row = await ctx.db.selectFrom('payments').selectAll().where('id', '=', id).where('client_id', '=', ctx.actor.id).executeTakeFirst();
  if (!row) throw new NotFoundError('payment', id);
  return { id: row.id, ...portalPaymentView(row) };
}
