import { bumpNodeRevisions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import {
  assertPortFree,
  checkInbound,
  hopNodesOfChain,
  type InboundFields,
  type InboundView,
  inboundTag,
  inboundView,
  lockNodePorts,
  mapInboundWriteError,
} from './inbound.ts';

export interface CreateInboundInput {
  node_id: string;
  profile_id: string;
  port: number;
  listen?: string | null | undefined;
  host?: string | null | undefined;
  chain_id?: string | null | undefined;
}

/** Binds a profile to a port of a node; the node (and the hops of its chain, if any) get a new revision. */
export async function createInbound(ctx: DomainContext, input: CreateInboundInput): Promise<InboundView> {
  const f: InboundFields = {
    node_id: input.node_id,
    profile_id: input.profile_id,
    port: input.port,
    listen: input.listen ?? null,
    host: input.host ?? null,
    chain_id: input.chain_id ?? null,
  };
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    // Ports first, then the chain (checkInbound share-locks it): the order chains take too.
    await lockNodePorts(trx, [f.node_id]);
    const { protocol } = await checkInbound(trx, f, { node: true, profile: true, chain: true });
    await assertPortFree(trx, f.node_id, f.port);
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('inbounds')
      .values({ id: newId('inb', now.getTime()), ...f, tag: inboundTag(protocol, f.port), created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch(mapInboundWriteError(f));
    const nodes = await bumpNodeRevisions(uow, [f.node_id, ...(await hopNodesOfChain(trx, f.chain_id))]);
    uow.audit({
      action: 'inbound.created',
      entity_type: 'inbound',
      entity_id: row.id,
      details: { node_id: f.node_id, profile_id: f.profile_id, port: f.port, tag: row.tag, chain_id: f.chain_id, nodes_bumped: nodes },
    });
    return inboundView(row);
  });
}
