import type { Db } from '@svc/db';
import { ValidationError } from '../errors.ts';

/**
 * For the inbounds use cases: an inbound with `chain_id` sends its traffic into the chain at
 * the first hop, so it must live on that hop's node. Call it inside the inbound's writing
 * transaction after `lockNodePorts`; it share-locks the chain row, so a concurrent PATCH of
 * the chain's hops (which locks it for update) is decided before or after, never across.
 * Throws ValidationError on `chain_id` (unknown chain, or another first-hop node).
 */
export async function assertInboundFitsChain(trx: Db, chainId: string, nodeId: string, field = 'chain_id'): Promise<void> {
  const chain = await trx.selectFrom('chains').select('id').where('id', '=', chainId).forShare().executeTakeFirst();
  if (!chain) throw new ValidationError('the chain does not exist', { [field]: `no chain ${chainId}` });
  const first = await trx
    .selectFrom('chain_hops')
    .select('node_id')
    .where('chain_id', '=', chainId)
    .orderBy('position')
    .limit(1)
    .executeTakeFirst();
  if (first?.node_id !== nodeId)
    throw new ValidationError('an inbound routed through a chain must live on the chain’s first hop node', {
      [field]: `chain ${chainId} starts at node ${first?.node_id ?? '(none)'}, not at node ${nodeId}`,
    });
}
