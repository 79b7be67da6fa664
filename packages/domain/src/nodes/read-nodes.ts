import type { AdminStatus, Connectivity } from '@svc/db';
import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type NodeView, nodeView } from './node-view.ts';

export interface NodeFilter extends PageRequest {
  admin_status?: AdminStatus | undefined;
  connectivity?: Connectivity | undefined;
}

/** Oldest first, by id (keyset). */
export async function listNodes(ctx: Pick<DomainContext, 'db'>, f: NodeFilter): Promise<Page<NodeView>> {
  let q = ctx.db.selectFrom('nodes').selectAll();
  if (f.admin_status) q = q.where('admin_status', '=', f.admin_status);
  if (f.connectivity) q = q.where('connectivity', '=', f.connectivity);
  const rows = await keysetRows(q, f);
  return toPage(rows, f.limit, nodeView);
}

export async function getNode(ctx: Pick<DomainContext, 'db'>, id: string): Promise<NodeView> {
  const row = await ctx.db.selectFrom('nodes').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('node', id);
  return nodeView(row);
}
