import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type PlanView, planAccessGroups, planView } from './plan-view.ts';

export interface PlanFilter extends PageRequest {
  archived?: boolean | undefined;
}

/** Oldest first, by id. */
export async function listPlans(ctx: Pick<DomainContext, 'db'>, f: PlanFilter): Promise<Page<PlanView>> {
  let q = ctx.db.selectFrom('plans').selectAll();
  if (f.archived !== undefined) q = q.where('archived', '=', f.archived);
  const rows = await keysetRows(q, f);
  const groups = await planAccessGroups(
    ctx.db,
    rows.slice(0, f.limit).map((r) => r.id),
  );
  return toPage(rows, f.limit, (r) => planView(r, groups.get(r.id) ?? []));
}

export async function getPlan(ctx: Pick<DomainContext, 'db'>, id: string): Promise<PlanView> {
  const row = await ctx.db.selectFrom('plans').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('plan', id);
  return planView(row, (await planAccessGroups(ctx.db, [id])).get(id) ?? []);
}
