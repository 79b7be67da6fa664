import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type InboundView, inboundView } from './inbound.ts';

export interface InboundFilter extends PageRequest {
  node_id?: string | undefined;
  profile_id?: string | undefined;
  chain_id?: string | undefined;
}

/** Oldest first, by id. */
export async function listInbounds(ctx: Pick<DomainContext, 'db'>, f: InboundFilter): Promise<Page<InboundView>> {
  let q = ctx.db.selectFrom('inbounds').selectAll();
  if (f.node_id) q = q.where('node_id', '=', f.node_id);
  if (f.profile_id) q = q.where('profile_id', '=', f.profile_id);
  if (f.chain_id) q = q.where('chain_id', '=', f.chain_id);
  const rows = await keysetRows(q, f);
  return toPage(rows, f.limit, inboundView);
}

export async function getInbound(ctx: Pick<DomainContext, 'db'>, id: string): Promise<InboundView> {
  const row = await ctx.db.selectFrom('inbounds').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('inbound', id);
  return inboundView(row);
}
