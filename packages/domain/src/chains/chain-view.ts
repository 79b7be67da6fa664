import type { Db } from '@svc/db';

export interface ChainHopView {
  /** 0-based, the hop's index in `hops`: traffic enters at position 0 and leaves the fleet at the last hop. */
  position: number;
  node_id: string;
  port: number;
}

export interface ChainView {
  id: string;
  name: string;
  hops: ChainHopView[];
  created_at: string;
  updated_at: string;
}

interface ChainRowLike {
  id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

/** Views of these chains with their hops in order (one query for the hops of all of them). The hop secrets never leave. */
export async function chainViews(db: Db, rows: readonly ChainRowLike[]): Promise<ChainView[]> {
  if (rows.length === 0) return [];
  const hops = await db
    .selectFrom('chain_hops')
    .select(['chain_id', 'position', 'node_id', 'port'])
    .where(
      'chain_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('chain_id')
    .orderBy('position')
    .execute();
  const byChain = new Map<string, ChainHopView[]>();
  for (const h of hops) {
    const list = byChain.get(h.chain_id) ?? [];
    list.push({ position: h.position, node_id: h.node_id, port: h.port });
    byChain.set(h.chain_id, list);
  }
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    hops: byChain.get(r.id) ?? [],
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  }));
}

export async function chainView(db: Db, row: ChainRowLike): Promise<ChainView> {
  return (await chainViews(db, [row]))[0] as ChainView;
}
