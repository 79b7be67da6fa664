import { NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { keysetRows, type Page, type PageRequest, toPage } from '../shared/pagination.ts';
import { type ChainView, chainView, chainViews } from './chain-view.ts';

export interface ChainFilter extends PageRequest {
  /** Chains with a hop on this node. */
  node_id?: string | undefined;
}

/** Oldest first, by id (keyset). */
export async function listChains(ctx: Pick<DomainContext, 'db'>, f: ChainFilter): Promise<Page<ChainView>> {
  let q = ctx.db.selectFrom('chains').selectAll();
  if (f.node_id) {
    const nodeId = f.node_id;
    q = q.where(({ exists, selectFrom }) =>
      exists(selectFrom('chain_hops as h').select('h.chain_id').whereRef('h.chain_id', '=', 'chains.id').where('h.node_id', '=', nodeId)),
    );
  }
  const rows = await keysetRows(q, f);
  const page = toPage(rows, f.limit, (r) => r);
  return { items: await chainViews(ctx.db, page.items), next_cursor: page.next_cursor };
}

export async function getChain(ctx: Pick<DomainContext, 'db'>, id: string): Promise<ChainView> {
  const row = await ctx.db.selectFrom('chains').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('chain', id);
  return chainView(ctx.db, row);
}
