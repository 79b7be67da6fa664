import { ConflictError, NotFoundError } from '../errors.ts';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { idList, isForeignKeyViolation } from '../shared/db-errors.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { hopNodesOfChain } from './inbound.ts';

/** Refused (409) while the inbound is in an access group; otherwise its node (and chain hops) get a new revision. */
export async function deleteInbound(ctx: DomainContext, id: string): Promise<void> {
  await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    // FOR UPDATE waits for (and then blocks) group memberships being added right now.
    const current = await trx.selectFrom('inbounds').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('inbound', id);
    const groups = await trx
      .selectFrom('access_group_inbounds')
      .select('access_group_id')
      .where('inbound_id', '=', id)
      .orderBy('access_group_id')
      .limit(100)
      .execute();
    if (groups.length > 0) throw inboundInUse(groups.map((g) => g.access_group_id));
    await trx
      .deleteFrom('inbounds')
      .where('id', '=', id)
      .execute()
      .catch((err: unknown) => {
        if (isForeignKeyViolation(err)) throw inboundInUse([]);
        throw err;
      });
    const nodes = await bumpNodeRevisions(uow, [current.node_id, ...(await hopNodesOfChain(trx, current.chain_id))]);
    uow.audit({
      action: 'inbound.deleted',
      entity_type: 'inbound',
      entity_id: id,
      details: { node_id: current.node_id, profile_id: current.profile_id, port: current.port, tag: current.tag, nodes_bumped: nodes },
    });
  });
}

const inboundInUse = (ids: string[]) =>
  new ConflictError(`the inbound is in access groups${ids.length ? ` (${idList(ids)})` : ''}; remove it from them first`, undefined, {
    blocked_by: { access_groups: ids },
  });
