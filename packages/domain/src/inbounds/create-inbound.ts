import { z } from 'zod';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { Port, RefId } from '../shared/fields.ts';
import { newId } from '../shared/ids.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';
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
import { InboundHost, Listen } from './inbound-fields.ts';

/** POST /inbounds, fixtures: a profile bound to a port of a node. */
export const CreateInboundInput = z
  .object({
    node_id: RefId,
    profile_id: RefId,
    port: Port,
    listen: Listen.nullable().default(null),
    host: InboundHost.nullable().default(null),
    chain_id: RefId.nullable()
      .default(null)
      .meta({ description: "send this inbound's traffic through the chain; the inbound must live on the chain's first hop node" }),
  })
  .strict()
  .brand<'CreateInboundInput'>();
export type CreateInboundInput = z.output<typeof CreateInboundInput>;

/** Binds a profile to a port of a node; the node (and the hops of its chain, if any) get a new revision. */
export async function createInbound(ctx: DomainContext, input: CreateInboundInput): Promise<InboundView> {
  const { node_id, profile_id, port, listen, host, chain_id } = input;
  const f: InboundFields = { node_id, profile_id, port, listen, host, chain_id };
  return unitOfWork(ctx, (uow) => insertInbound(ctx, uow, f));
}

/** createInbound inside a unit of work the caller holds (the import binds many at once). */
export async function insertInbound(ctx: DomainContext, uow: UnitOfWork, f: InboundFields): Promise<InboundView> {
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
}
