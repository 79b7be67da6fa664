import type { Db, PaymentRow } from '@svc/db';
import { NotFoundError } from '../errors.ts';
import { portalClient } from '../portal/portal-client.ts';
import type { PortalCtx } from '../portal/portal-subscriptions.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type CheckoutView, checkoutView } from './checkout-view.ts';

/**
 * A payment as its customer sees it: the checkout's answer, when it was paid, why it ended as it
 * did, and what it was for in words (the plan's and the payment method's names as they are now:
 * a receipt names what was bought).
 */
export interface PortalPaymentView extends CheckoutView {
  id: string;
  paid_at: string | null;
  status_reason: string | null;
  plan_name: string;
  provider_name: string;
  provider_kind: string;
}

interface Names {
  plans: Map<string, string>;
  providers: Map<string, { name: string; kind: string }>;
}

/** The names of the plans and providers these payments name: two reads, whatever the page's size. */
async function namesOf(db: Db, rows: readonly PaymentRow[]): Promise<Names> {
  const planIds = [...new Set(rows.map((r) => r.plan_id))];
  const providerIds = [...new Set(rows.map((r) => r.provider_id))];
  const [plans, providers] = await Promise.all([
    planIds.length ? db.selectFrom('plans').select(['id', 'name']).where('id', 'in', planIds).execute() : [],
    providerIds.length ? db.selectFrom('payment_providers').select(['id', 'name', 'kind']).where('id', 'in', providerIds).execute() : [],
  ]);
  return {
    plans: new Map(plans.map((p) => [p.id, p.name])),
    providers: new Map(providers.map((p) => [p.id, { name: p.name, kind: p.kind }])),
  };
}

const portalPaymentView = (r: PaymentRow, names: Names): PortalPaymentView => {
  const provider = names.providers.get(r.provider_id);
  return {
    id: r.id,
    ...checkoutView(r),
    paid_at: r.paid_at?.toISOString() ?? null,
    status_reason: r.status_reason,
    // A plan is archived, never deleted while payments name it (on delete restrict); a provider likewise.
    plan_name: names.plans.get(r.plan_id) ?? r.plan_id,
    provider_name: provider?.name ?? r.provider_id,
    provider_kind: provider?.kind ?? 'unknown',
  };
};

/** GET /portal/v1/payments: the client's own payments, oldest first (a pending one still carries its checkout URL). */
export async function portalPayments(ctx: PortalCtx, page: PageRequest): Promise<Page<PortalPaymentView>> {
  await portalClient(ctx, ctx.actor.id);
  const rows = await keysetRows(ctx.db.selectFrom('payments').selectAll().where('client_id', '=', ctx.actor.id), page);
  const names = await namesOf(ctx.db, rows);
  return toPage(rows, page.limit, (r) => portalPaymentView(r, names));
}

/** GET /portal/v1/payments/{id}: one of the client's own payments; another client's reads like a missing one (404). */
export async function portalPayment(ctx: PortalCtx, id: string): Promise<PortalPaymentView> {
  await portalClient(ctx, ctx.actor.id);
  const row = await ctx.db.selectFrom('payments').selectAll().where('id', '=', id).where('client_id', '=', ctx.actor.id).executeTakeFirst();
  if (!row) throw new NotFoundError('payment', id);
  return portalPaymentView(row, await namesOf(ctx.db, [row]));
}
