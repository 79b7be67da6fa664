import { type PlanView, planView } from '../billing/plan-view.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';

/** A plan as customers see it: the admin view without the operator's fields (access groups, archived, times). */
export type PortalPlanView = Omit<PlanView, 'access_group_ids' | 'archived' | 'created_at' | 'updated_at'>;

/**
 * GET /portal/v1/plans: non-archived plans only (spec 4.6), a page at a time like every list
 * (spec 4.2): by id, oldest first. No longer cheapest first: keyset pages by price would need a
 * cursor of their own; a shop that wants the cheapest first sorts what it read (docs/portal.md).
 */
export async function portalPlans(ctx: Pick<DomainContext, 'db'>, page: PageRequest): Promise<Page<PortalPlanView>> {
  const rows = await keysetRows(ctx.db.selectFrom('plans').selectAll().where('archived', '=', false), page);
  return toPage(rows, page.limit, (r) => {
    const { access_group_ids: _g, archived: _a, created_at: _c, updated_at: _u, ...shown } = planView(r, []);
    return shown;
  });
}

/** A payment method as customers see it: which provider, never its settings. */
export interface PortalPaymentMethodView {
  id: string;
  kind: string;
  name: string;
}

/** GET /portal/v1/payment-methods: enabled providers only (spec 4.6), a page at a time, by id. */
export async function portalPaymentMethods(ctx: Pick<DomainContext, 'db'>, page: PageRequest): Promise<Page<PortalPaymentMethodView>> {
  const rows = await keysetRows(ctx.db.selectFrom('payment_providers').select(['id', 'kind', 'name']).where('enabled', '=', true), page);
  return toPage(rows, page.limit, (r) => ({ id: r.id, kind: r.kind, name: r.name }));
}
