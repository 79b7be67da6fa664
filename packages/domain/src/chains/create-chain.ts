import { z } from 'zod';
import { ConflictError } from '../errors.ts';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { ChainHops, ChainName } from './chain-fields.ts';
import { type ChainView, chainView } from './chain-view.ts';
import { checkHopsAvailable, insertHops } from './hops.ts';

/** POST /chains, fixtures: a chain and its ordered hops. */
export const CreateChainInput = z.object({ name: ChainName, hops: ChainHops }).strict().brand<'CreateChainInput'>();
export type CreateChainInput = z.output<typeof CreateChainInput>;

export const chainNameTaken = () => new ConflictError('a chain with this name exists', { name: 'already taken' });

/** Creates a chain and its ordered hops; every hop node now runs a chain-in/out, so each is bumped. */
export async function createChain(ctx: DomainContext, input: CreateChainInput): Promise<ChainView> {
  const { name } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    await checkHopsAvailable(trx, input.hops);
    const taken = await trx.selectFrom('chains').select('id').where('name', '=', name).executeTakeFirst();
    if (taken) throw chainNameTaken();
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('chains')
      .values({ id: newId('chn', now.getTime()), name, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err, 'chains_name_key')) throw chainNameTaken();
        throw err;
      });
    await insertHops(trx, ctx, row.id, input.hops);
    const bumped = await bumpNodeRevisions(
      uow,
      input.hops.map((h) => h.node_id),
    );
    uow.audit({
      action: 'chain.created',
      entity_type: 'chain',
      entity_id: row.id,
      details: { name, hops: input.hops.map((h) => ({ node_id: h.node_id, port: h.port })), bumped_nodes: bumped },
    });
    return chainView(trx, row);
  });
}
