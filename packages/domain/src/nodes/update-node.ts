import { z } from 'zod';
import { NotFoundError } from '../errors.ts';
import { bumpNodeRevisions, nodesDialingNode } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { nodeNameTaken } from './create-node.ts';
import { AdminStatus, NodeAddress, NodeName } from './node-fields.ts';
import { type NodeView, nodeView } from './node-view.ts';
import { getNode } from './read-nodes.ts';

/** PATCH /nodes/{id}: a merge; absent fields stay as they are. */
export const UpdateNodeInput = z
  .object({ name: NodeName.optional(), address: NodeAddress.optional(), admin_status: AdminStatus.optional() })
  .strict()
  .brand<'UpdateNodeInput'>();
export type UpdateNodeInput = z.output<typeof UpdateNodeInput>;

/**
 * PATCH merge. A new address changes what the nodes dialing this one (the previous hop of
 * each chain it is part of) must run, so those are bumped; the name and admin_status
 * change nothing a node runs; a changed admin_status is announced so the gateway ends
 * (disabled) or admits again (enabled) the node's stream, and re-enabling bumps the node so
 * its agent is sent a complete snapshot.
 */
export async function updateNode(ctx: DomainContext, id: string, input: UpdateNodeInput): Promise<NodeView> {
  if (isEmptyPatch(input)) return getNode(ctx, id);
  const { name, address } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await trx.selectFrom('nodes').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('node', id);
    if (name !== undefined && name !== current.name) {
      const taken = await trx.selectFrom('nodes').select('id').where('name', '=', name).where('id', '!=', id).executeTakeFirst();
      if (taken) throw nodeNameTaken();
    }
    const now = ctx.clock.now();
    const row = await trx
      .updateTable('nodes')
      .set({
        ...(name !== undefined ? { name } : {}),
        ...(address !== undefined ? { address } : {}),
        ...(input.admin_status !== undefined ? { admin_status: input.admin_status } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err, 'nodes_name_key')) throw nodeNameTaken();
        throw err;
      });
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    if (name !== undefined && name !== current.name) changes.name = { from: current.name, to: name };
    if (address !== undefined && address !== current.address) changes.address = { from: current.address, to: address };
    if (input.admin_status !== undefined && input.admin_status !== current.admin_status)
      changes.admin_status = { from: current.admin_status, to: input.admin_status };
    // Never this node itself: a node appears at most once per chain, so it never dials itself.
    // Disabling ends the node's open stream; re-enabling lets it back in (the gateway re-reads the row).
    if (changes.admin_status) uow.nodesChanged([id]);
    // Subscription links show the node's name (each server's) and address: cached links drop.
    if (changes.name || changes.address) uow.subscriptionLinksChanged();
    const bumped = await bumpNodeRevisions(uow, [
      ...(changes.address ? await nodesDialingNode(trx, id) : []),
      // Re-enabled: its agent gets a complete snapshot on its next stream, whatever it ran meanwhile.
      ...(changes.admin_status && input.admin_status === 'enabled' ? [id] : []),
    ]);
    uow.audit({
      action: 'node.updated',
      entity_type: 'node',
      entity_id: id,
      details: { changed: Object.keys(changes), ...changes, ...(bumped.length ? { bumped_nodes: bumped } : {}) },
    });
    return nodeView(row);
  });
}
