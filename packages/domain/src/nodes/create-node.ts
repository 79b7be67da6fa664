import { z } from 'zod';
import { ConflictError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { NodeAddress, NodeName } from './node-fields.ts';
import { type NodeView, nodeView } from './node-view.ts';

/** POST /nodes, `svc` and fixtures: what a new node needs. */
export const CreateNodeInput = z.object({ name: NodeName, address: NodeAddress }).strict().brand<'CreateNodeInput'>();
export type CreateNodeInput = z.output<typeof CreateNodeInput>;

export const nodeNameTaken = () => new ConflictError('a node with this name exists', { name: 'already taken' });

/**
 * A new node starts enabled and offline with desired_revision 1 and nothing applied; it
 * runs nothing until inbounds or chain hops are placed on it, so no other node is bumped.
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
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err, 'nodes_name_key')) throw nodeNameTaken();
        throw err;
      });
    uow.audit({ action: 'node.created', entity_type: 'node', entity_id: row.id, details: { name, address } });
    return nodeView(row);
  });
}
