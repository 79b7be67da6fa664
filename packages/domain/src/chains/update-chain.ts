import { z } from 'zod';
import { ConflictError, NotFoundError } from '../errors.ts';
import { bumpNodeRevisions, nodesOfChain } from '../fleet/revisions.ts';
import { lockNodePorts } from '../nodes/node-ports.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { ChainHops, ChainName } from './chain-fields.ts';
import { type ChainView, chainView } from './chain-view.ts';
import { chainNameTaken } from './create-chain.ts';
import { checkHopsAvailable, insertHops, sameHops } from './hops.ts';
import { getChain } from './read-chains.ts';

/** PATCH /chains/{id}: a merge; `hops` replaces the whole list (spec 4.4). */
export const UpdateChainInput = z
  .object({ name: ChainName.optional(), hops: ChainHops.optional().meta({ description: 'Replaces the whole hop list' }) })
  .strict()
  .brand<'UpdateChainInput'>();
export type UpdateChainInput = z.output<typeof UpdateChainInput>;

/**
 * PATCH merge; `hops` replaces the list. A changed list bumps every node of the chain before
 * and after (old and new hops, and the nodes of inbounds routed through it); the same list
 * again changes nothing. Inbounds routed through the chain live on its first hop's node, so
 * moving the first hop to another node while any exist is a 409 naming them. A rename bumps
 * nothing.
 */
export async function updateChain(ctx: DomainContext, id: string, input: UpdateChainInput): Promise<ChainView> {
  if (isEmptyPatch(input)) return getChain(ctx, id);
  const { name } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    // Ports before the chain row: the order every port-taking writer follows.
    if (input.hops !== undefined)
      await lockNodePorts(
        trx,
        input.hops.map((h) => h.node_id),
      );
    const current = await trx.selectFrom('chains').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('chain', id);
    const oldHops = await trx.selectFrom('chain_hops').select(['node_id', 'port']).where('chain_id', '=', id).orderBy('position').execute();
    const hops = input.hops !== undefined && !sameHops(oldHops, input.hops) ? input.hops : undefined;

    if (name !== undefined && name !== current.name) {
      const taken = await trx.selectFrom('chains').select('id').where('name', '=', name).where('id', '!=', id).executeTakeFirst();
      if (taken) throw chainNameTaken();
    }
    let bumped: string[] = [];
    if (hops !== undefined) {
      const newFirst = hops[0]?.node_id;
      if (newFirst !== oldHops[0]?.node_id) {
        const inbounds = (await trx.selectFrom('inbounds').select('id').where('chain_id', '=', id).orderBy('id').limit(100).execute()).map(
          (r) => r.id,
        );
        if (inbounds.length > 0)
          throw new ConflictError(
            `the first hop of chain ${id} cannot move to another node while inbounds route through it (they live on the first hop's node)`,
            { 'hops.0.node_id': 'inbounds routed through this chain live on the current first hop node' },
            { blocked_by: { inbounds } },
          );
      }
      await checkHopsAvailable(trx, hops, id);
      const before = await nodesOfChain(trx, id);
      await trx.deleteFrom('chain_hops').where('chain_id', '=', id).execute();
      await insertHops(trx, ctx, id, hops);
      const after = await nodesOfChain(trx, id);
      bumped = await bumpNodeRevisions(uow, [...before, ...after]);
    }

    const now = ctx.clock.now();
    const row = await trx
      .updateTable('chains')
      .set({ ...(name !== undefined ? { name } : {}), updated_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err, 'chains_name_key')) throw chainNameTaken();
        throw err;
      });
    const changed: string[] = [];
    if (name !== undefined && name !== current.name) changed.push('name');
    if (hops !== undefined) changed.push('hops');
    uow.audit({
      action: 'chain.updated',
      entity_type: 'chain',
      entity_id: id,
      details: {
        changed,
        ...(changed.includes('name') ? { name: { from: current.name, to: name } } : {}),
        ...(hops !== undefined ? { hops: { from: oldHops, to: hops.map((h) => ({ node_id: h.node_id, port: h.port })) } } : {}),
        ...(bumped.length ? { bumped_nodes: bumped } : {}),
      },
    });
    return chainView(trx, row);
  });
}
