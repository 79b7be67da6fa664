import { z } from 'zod';
import { NotFoundError } from '../errors.ts';
import { bumpNodeRevisions } from '../fleet/revisions.ts';
import { graceNodeGroups } from '../fleet/serving.ts';
import type { DomainContext } from '../shared/context.ts';
import { Port, RefId } from '../shared/fields.ts';
import { isEmptyPatch } from '../shared/input.ts';
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
import { InboundHost, Listen } from './inbound-fields.ts';
import { getInbound } from './read-inbounds.ts';

/** PATCH /inbounds/{id}: a merge; absent fields stay as they are, null clears. */
export const UpdateInboundInput = z
  .object({
    node_id: RefId.optional(),
    profile_id: RefId.optional(),
    port: Port.optional(),
    listen: Listen.nullable().optional().meta({ description: 'null clears' }),
    host: InboundHost.nullable().optional().meta({ description: 'null clears' }),
    chain_id: RefId.nullable().optional().meta({ description: 'null clears' }),
  })
  .strict()
  .brand<'UpdateInboundInput'>();
export type UpdateInboundInput = z.output<typeof UpdateInboundInput>;

/** What a node runs from an inbound; `host` only shapes client links. */
const NODE_FIELDS = ['node_id', 'profile_id', 'port', 'listen', 'chain_id'] as const;

/**
 * PATCH merge. A change a node runs moves the revision of the old and the new node, and of
 * the hops of the old and the new chain when the chain changes.
 */
export async function updateInbound(ctx: DomainContext, id: string, input: UpdateInboundInput): Promise<InboundView> {
  if (isEmptyPatch(input)) return getInbound(ctx, id);
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx.selectFrom('inbounds').selectAll().where('id', '=', id).forNoKeyUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('inbound', id);
    const f: InboundFields = {
      node_id: input.node_id ?? current.node_id,
      profile_id: input.profile_id ?? current.profile_id,
      port: input.port ?? current.port,
      listen: input.listen !== undefined ? input.listen : current.listen,
      host: input.host !== undefined ? input.host : current.host,
      chain_id: input.chain_id !== undefined ? input.chain_id : current.chain_id,
    };
    const changed = (Object.keys(f) as (keyof InboundFields)[]).filter((k) => f[k] !== current[k]);
    // Ports first, then the chain (checkInbound share-locks it): the order chains take too.
    const portsMove = changed.includes('node_id') || changed.includes('port');
    if (portsMove) await lockNodePorts(trx, [f.node_id]);
    const { protocol } = await checkInbound(trx, f, {
      node: changed.includes('node_id'),
      profile: changed.includes('profile_id'),
      chain: changed.includes('chain_id') || changed.includes('node_id'),
    });
    if (portsMove) await assertPortFree(trx, f.node_id, f.port, id);
    const row = await trx
      .updateTable('inbounds')
      .set({ ...f, tag: inboundTag(protocol, f.port), updated_at: ctx.clock.now() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch(mapInboundWriteError(f));
    if (changed.includes('node_id')) {
      // Moved: the old node may still send what the members of the inbound's groups used there.
      const groups = await trx.selectFrom('access_group_inbounds').select('access_group_id').where('inbound_id', '=', id).execute();
      await graceNodeGroups(
        uow,
        ctx.clock.now(),
        groups.map((g) => ({ node_id: current.node_id, access_group_id: g.access_group_id })),
      );
    }
    let nodes: string[] = [];
    if (changed.some((k) => (NODE_FIELDS as readonly string[]).includes(k))) {
      const chainNodes = changed.includes('chain_id')
        ? [...(await hopNodesOfChain(trx, current.chain_id)), ...(await hopNodesOfChain(trx, f.chain_id))]
        : [];
      nodes = await bumpNodeRevisions(uow, [current.node_id, f.node_id, ...chainNodes]);
    }
    uow.audit({
      action: 'inbound.updated',
      entity_type: 'inbound',
      entity_id: id,
      details: {
        changed,
        ...Object.fromEntries(changed.map((k) => [k, { from: current[k], to: f[k] }])),
        ...(nodes.length > 0 ? { nodes_bumped: nodes } : {}),
      },
    });
    return inboundView(row);
  });
}
