import { z } from 'zod';
import { NotFoundError } from '../errors.ts';
import { bumpNodeRevisions, nodesDialingNode } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { isEmptyPatch } from '../shared/input.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { nodeNameTaken } from './create-node.ts';
import { AdminStatus, NodeAddress, NodeName } from './node-fields.ts';
import { applyNodeQuota, multiplierText, TrafficMultiplier, TrafficQuotaBytes, TrafficQuotaRenewal } from './node-traffic.ts';
import { type NodeView, nodeView } from './node-view.ts';
import { getNode } from './read-nodes.ts';

/** PATCH /nodes/{id}: a merge; absent fields stay as they are. */
export const UpdateNodeInput = z
  .object({
    name: NodeName.optional(),
    address: NodeAddress.optional(),
    admin_status: AdminStatus.optional(),
    traffic_multiplier: TrafficMultiplier.optional(),
    traffic_quota_bytes: TrafficQuotaBytes.optional(),
    traffic_quota_renewal: TrafficQuotaRenewal.optional(),
  })
  .strict()
  .brand<'UpdateNodeInput'>();
export type UpdateNodeInput = z.output<typeof UpdateNodeInput>;

/**
 * PATCH merge. A new address changes what the nodes dialing this one (the previous hop of
 * each chain it is part of) must run, so those are bumped; the name and admin_status
 * change nothing a node runs; a changed admin_status is announced so the gateway ends
 * (disabled) or admits again (enabled) the node's stream, and re-enabling bumps the node so
 * its agent is sent a complete snapshot.
 *
 * The traffic multiplier applies to reports that arrive from now on. A changed quota is weighed
 * against this period's usage at once (node-traffic.ts, applyNodeQuota): raised above it or
 * removed, a limited node is back in service (a new revision, links changed); lowered to it, the
 * node is limited. A changed renewal takes effect at its next boundary (the sweep).
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
        ...(input.traffic_multiplier !== undefined ? { traffic_multiplier: multiplierText(input.traffic_multiplier) } : {}),
        ...(input.traffic_quota_bytes !== undefined ? { traffic_quota_bytes: input.traffic_quota_bytes } : {}),
        ...(input.traffic_quota_renewal !== undefined ? { traffic_quota_renewal: input.traffic_quota_renewal } : {}),
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
    if (Number(row.traffic_multiplier) !== Number(current.traffic_multiplier))
      changes.traffic_multiplier = { from: Number(current.traffic_multiplier), to: Number(row.traffic_multiplier) };
    if (String(row.traffic_quota_bytes) !== String(current.traffic_quota_bytes))
      changes.traffic_quota_bytes = { from: numberOrNull(current.traffic_quota_bytes), to: numberOrNull(row.traffic_quota_bytes) };
    if (row.traffic_quota_renewal !== current.traffic_quota_renewal)
      changes.traffic_quota_renewal = { from: current.traffic_quota_renewal, to: row.traffic_quota_renewal };
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
    // The quota weighed against this period's usage: limited or back in service now (its own audit entry).
    if (changes.traffic_quota_bytes && (await applyNodeQuota(uow, row, now, 'quota changed')))
      return nodeView(await trx.selectFrom('nodes').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
    return nodeView(row);
  });
}

const numberOrNull = (v: number | string | null) => (v === null ? null : Number(v));
