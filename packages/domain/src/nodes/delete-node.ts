import { ConflictError, NotFoundError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/** How many blocking ids a 409 names per kind (the message gives the full count). */
const BLOCKERS_SHOWN = 100;

/**
 * Deletes a node that nothing uses. A hop of a chain (spec 4.4, 7.2) or a node still running
 * inbounds answers 409 naming them (`blocked_by: {chains, inbounds}`). The row lock makes a
 * concurrent hop or inbound insert (whose foreign key locks this row) wait for the decision.
 * Nothing else runs anything of this node, so no revision moves; the gateway is told so the
 * node's open stream ends.
 */
export async function deleteNode(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx.selectFrom('nodes').select(['id', 'name', 'address']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('node', id);
    const chains = (
      await trx.selectFrom('chain_hops').select('chain_id').distinct().where('node_id', '=', id).orderBy('chain_id').execute()
    ).map((r) => r.chain_id);
    const inbounds = (await trx.selectFrom('inbounds').select('id').where('node_id', '=', id).orderBy('id').execute()).map((r) => r.id);
    if (chains.length > 0 || inbounds.length > 0) {
      const parts = [
        ...(chains.length ? [`a hop of ${chains.length} chain(s)`] : []),
        ...(inbounds.length ? [`running ${inbounds.length} inbound(s)`] : []),
      ];
      throw new ConflictError(`node ${id} cannot be deleted: it is ${parts.join(' and ')}; change those first`, undefined, {
        blocked_by: {
          ...(chains.length ? { chains: chains.slice(0, BLOCKERS_SHOWN) } : {}),
          ...(inbounds.length ? { inbounds: inbounds.slice(0, BLOCKERS_SHOWN) } : {}),
        },
      });
    }
    await trx.deleteFrom('nodes').where('id', '=', id).execute();
    uow.nodesChanged([id]); // its open stream ends
    uow.audit({
      action: 'node.deleted',
      entity_type: 'node',
      entity_id: id,
      details: { name: current.name, address: current.address },
    });
  });
}
