import { ConflictError, NotFoundError } from '../errors.ts';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/**
 * Deletes a chain no inbound routes through (409 `blocked_by: {inbounds}` otherwise); its hops
 * go with it and every hop node is bumped. The row lock makes an inbound insert naming this
 * chain (its foreign key locks the row) wait for the decision.
 */
export async function deleteChain(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx.selectFrom('chains').select(['id', 'name']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('chain', id);
    const inbounds = (await trx.selectFrom('inbounds').select('id').where('chain_id', '=', id).orderBy('id').limit(100).execute()).map(
      (r) => r.id,
    );
    if (inbounds.length > 0)
      throw new ConflictError(`chain ${id} cannot be deleted: inbounds route through it; detach them first`, undefined, {
        blocked_by: { inbounds },
      });
    const hops = await trx.selectFrom('chain_hops').select(['node_id', 'port']).where('chain_id', '=', id).orderBy('position').execute();
    await trx.deleteFrom('chains').where('id', '=', id).execute();
    const bumped = await bumpNodeRevisions(
      uow,
      hops.map((h) => h.node_id),
    );
    uow.audit({
      action: 'chain.deleted',
      entity_type: 'chain',
      entity_id: id,
      details: { name: current.name, hops, bumped_nodes: bumped },
    });
  });
}
