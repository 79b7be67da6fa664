import type { AdminStatus, Connectivity } from '@svc/db';
import { sql } from 'kysely';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { type ListPage, type ListRequest, type ListSpec, listPage, searchTerms } from '../shared/list-query.ts';
import { type NodeView, nodeView } from './node-view.ts';

export interface NodeFilter extends ListRequest {
  admin_status?: AdminStatus | undefined;
  connectivity?: Connectivity | undefined;
}

export const NODE_LIST: ListSpec = {
  idColumn: 'id',
  defaultSort: 'created',
  sorts: { name: { expr: sql`name`, kind: 'text' }, address: { expr: sql`address`, kind: 'text' } },
};

/** Oldest first by default (keyset). `q` matches an id by its start, the name, address or hostname anywhere. */
export async function listNodes(ctx: Pick<DomainContext, 'db'>, f: NodeFilter): Promise<ListPage<NodeView>> {
  let q = ctx.db.selectFrom('nodes').selectAll();
  if (f.admin_status) q = q.where('admin_status', '=', f.admin_status);
  if (f.connectivity) q = q.where('connectivity', '=', f.connectivity);
  const terms = searchTerms(f.q);
  if (terms)
    q = q.where((eb) =>
      eb.or([
        eb('id', 'like', terms.prefix),
        eb('name', 'ilike', terms.contains),
        eb('address', 'ilike', terms.contains),
        eb('hostname', 'ilike', terms.contains),
      ]),
    );
  return listPage(ctx.db, q, f, NODE_LIST, (rows) => rows.map(nodeView));
}

export async function getNode(ctx: Pick<DomainContext, 'db'>, id: string): Promise<NodeView> {
  const row = await ctx.db.selectFrom('nodes').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('node', id);
  return nodeView(row);
}
