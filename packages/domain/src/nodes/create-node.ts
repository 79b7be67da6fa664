import { z } from 'zod';
import { ConflictError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { NodeAddress, NodeName } from './node-fields.ts';
import { applyNodeQuota, multiplierText, TrafficMultiplier, TrafficQuotaBytes, TrafficQuotaRenewal } from './node-traffic.ts';
import { type NodeView, nodeView } from './node-view.ts';

/** POST /nodes, `svc` and fixtures: what a new node needs. */
export const CreateNodeInput = z
  .object({
    name: NodeName,
    address: NodeAddress,
    traffic_multiplier: TrafficMultiplier.optional(),
    traffic_quota_bytes: TrafficQuotaBytes.optional(),
    traffic_quota_renewal: TrafficQuotaRenewal.optional(),
  })
  .strict()
  .brand<'CreateNodeInput'>();
export type CreateNodeInput = z.output<typeof CreateNodeInput>;

export const nodeNameTaken = () => new ConflictError('a node with this name exists', { name: 'already taken' });

/**
 * A new node starts enabled and offline with desired_revision 1 and nothing applied; it
 * runs nothing until inbounds or chain hops are placed on it, so no other node is bumped.
 * Its traffic multiplier defaults to 1, its quota to none (renewal month); its quota period
 * starts now. A quota of 0 limits it at once (node-traffic.ts).
 */
export async function createNode(ctx: DomainContext, input: CreateNodeInput): Promise<NodeView> {
  const { name, address } = input;
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const taken = await trx.selectFrom('nodes').select('id').where('name', '=', name).executeTakeFirst();
    if (taken) throw nodeNameTaken();
    const now = ctx.clock.now();
    const row = await trx
      .insertInto('nodes')
      .values({
        id: newId('nod', now.getTime()),
        name,
        address,
        last_apply_error: null,
        last_seen_at: null,
        agent_version: null,
        xray_version: null,
        hostname: null,
        os: null,
        arch: null,
        status: null,
        enroll_token_hash: null,
        enroll_token_expires_at: null,
        ...(input.traffic_multiplier !== undefined ? { traffic_multiplier: multiplierText(input.traffic_multiplier) } : {}),
        traffic_quota_bytes: input.traffic_quota_bytes ?? null,
        ...(input.traffic_quota_renewal !== undefined ? { traffic_quota_renewal: input.traffic_quota_renewal } : {}),
        traffic_period_started_at: now,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err, 'nodes_name_key')) throw nodeNameTaken();
        throw err;
      });
    uow.audit({
      action: 'node.created',
      entity_type: 'node',
      entity_id: row.id,
      // The traffic settings given (the others are their defaults).
      details: {
        name,
        address,
        ...(input.traffic_multiplier !== undefined ? { traffic_multiplier: Number(row.traffic_multiplier) } : {}),
        ...(input.traffic_quota_bytes != null ? { traffic_quota_bytes: Number(row.traffic_quota_bytes) } : {}),
        ...(input.traffic_quota_renewal !== undefined ? { traffic_quota_renewal: row.traffic_quota_renewal } : {}),
      },
    });
    // Only a quota of 0 is reached before any traffic: the view then shows the node limited.
    if (await applyNodeQuota(uow, row, now, 'created with a quota of 0'))
      return nodeView(await trx.selectFrom('nodes').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow());
    return nodeView(row);
  });
}
