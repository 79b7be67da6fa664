import { type PlanView, planView } from '../billing/plan-view.ts';
import type { DomainContext } from '../shared/context.ts';

/** A plan as customers see it: the admin view without the operator's fields (access groups, archived, times). */
export type PortalPlanView = Omit<PlanView, 'access_group_ids' | 'archived' | 'created_at' | 'updated_at'>;

/** GET /portal/v1/plans: non-archived plans only (spec 4.6), cheapest first. */
export async function portalPlans(ctx: Pick<DomainContext, 'db'>): Promise<PortalPlanView[]> {
  const rows = await ctx.db
    .selectFrom('plans')
    .selectAll()
    .where('archived', '=', false)
    .orderBy('price')
    .orderBy('id')
    .limit(1000)
    .execute();
  return rows.map((r) => {
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

/** GET /portal/v1/payment-methods: enabled providers only (spec 4.6). */
export async function portalPaymentMethods(ctx: Pick<DomainContext, 'db'>): Promise<PortalPaymentMethodView[]> {
  const rows = await ctx.db
    .selectFrom('payment_providers')
    .select(['id', 'kind', 'name'])
    .where('enabled', '=', true)
    .orderBy('id')
    .limit(1000)
    .execute();
  return rows.map((r) => ({ id: r.id, kind: r.kind, name: r.name }));
}
