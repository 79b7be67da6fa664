import type { Db } from '@svc/db';
import { ConflictError, ValidationError } from '../errors.ts';
import { lockNodePorts, portUsers } from '../nodes/node-ports.ts';
import type { DomainContext } from '../shared/context.ts';
import { isUniqueViolation } from '../shared/db-errors.ts';
import { randomToken } from '../shared/secrets.ts';

export interface HopInput {
  node_id: string;
  port: number;
}

export const sameHops = (a: readonly HopInput[], b: readonly HopInput[]): boolean =>
  a.length === b.length && a.every((h, i) => h.node_id === b[i]?.node_id && h.port === b[i]?.port);

/**
 * The rules that need the database, inside the writing transaction: every node exists, and
 * no hop's (node, port) is taken by an inbound of that node or a hop of another chain. Locks
 * the hop nodes' ports first (see lockNodePorts), then the nodes themselves against deletion.
 */
export async function checkHopsAvailable(trx: Db, hops: readonly HopInput[], exceptChainId?: string): Promise<void> {
  const nodeIds = hops.map((h) => h.node_id);
  await lockNodePorts(trx, nodeIds);
  const known = new Set((await trx.selectFrom('nodes').select('id').where('id', 'in', nodeIds).forKeyShare().execute()).map((r) => r.id));
  const missing: Record<string, string> = {};
  hops.forEach((h, i) => {
    if (!known.has(h.node_id)) missing[`hops.${i}.node_id`] = `no node ${h.node_id}`;
  });
  if (Object.keys(missing).length > 0) throw new ValidationError('a hop names a node that does not exist', missing);

  const errors: Record<string, string> = {};
  const inbounds: string[] = [];
  const chains: string[] = [];
  for (const [i, h] of hops.entries()) {
    const users = await portUsers(trx, h.node_id, h.port, { chainId: exceptChainId });
    if (users.inbounds.length === 0 && users.chains.length === 0) continue;
    const by = [...users.inbounds.map((id) => `inbound ${id}`), ...users.chains.map((id) => `chain ${id}`)].join(', ');
    errors[`hops.${i}.port`] = `port ${h.port} of node ${h.node_id} is taken by ${by}`;
    inbounds.push(...users.inbounds);
    chains.push(...users.chains);
  }
  if (Object.keys(errors).length > 0) throw portConflict(errors, inbounds, chains);
}

function portConflict(errors: Record<string, string>, inbounds: string[], chains: string[]): ConflictError {
  return new ConflictError(`a hop's port is already taken: ${Object.values(errors).join('; ')}`, errors, {
    blocked_by: {
      ...(inbounds.length ? { inbounds: [...new Set(inbounds)] } : {}),
      ...(chains.length ? { chains: [...new Set(chains)] } : {}),
    },
  });
}

/** Writes the hops of a chain in order, each with a fresh secret (sealed at rest). */
export async function insertHops(trx: Db, ctx: Pick<DomainContext, 'secrets'>, chainId: string, hops: readonly HopInput[]): Promise<void> {
  await trx
    .insertInto('chain_hops')
    .values(
      hops.map((h, position) => ({
        chain_id: chainId,
        position,
        node_id: h.node_id,
        port: h.port,
        secret: ctx.secrets.seal(randomToken(32)),
      })),
    )
    .execute()
    .catch((err: unknown) => {
      // Only reachable when a writer skipped lockNodePorts: the constraint still holds the line.
      if (isUniqueViolation(err, 'chain_hops_node_port'))
        throw new ConflictError('a hop (node, port) is already taken by another chain', { hops: 'a (node, port) pair is taken' });
      throw err;
    });
}
