import type { Db, InboundRow } from '@svc/db';
import { assertInboundFitsChain } from '../chains/inbound-fits-chain.ts';
import { ConflictError, ValidationError } from '../errors.ts';
import { lockNodePorts, portUsers } from '../nodes/node-ports.ts';
import { idList, isForeignKeyViolation, isUniqueViolation } from '../shared/db-errors.ts';

export interface InboundView {
  id: string;
  node_id: string;
  profile_id: string;
  tag: string;
  port: number;
  listen: string | null;
  host: string | null;
  chain_id: string | null;
  created_at: string;
  updated_at: string;
}

export const inboundView = (r: InboundRow): InboundView => ({
  id: r.id,
  node_id: r.node_id,
  profile_id: r.profile_id,
  tag: r.tag,
  port: r.port,
  listen: r.listen,
  host: r.host,
  chain_id: r.chain_id,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export interface InboundFields {
  node_id: string;
  profile_id: string;
  port: number;
  listen: string | null;
  host: string | null;
  chain_id: string | null;
}

/** `<protocol>-<port>`: ports are unique per node, so tags are too. */
export const inboundTag = (protocol: string, port: number): string => `${protocol}-${port}`;

/**
 * Checks what the fields reference (their own rules are the input schemas'); returns the
 * profile's protocol (for the tag). Only the references in `check` are looked up (a PATCH
 * checks what it changes).
 */
export async function checkInbound(
  trx: Db,
  f: InboundFields,
  check: { node: boolean; profile: boolean; chain: boolean },
): Promise<{ protocol: string }> {
  const errors: Record<string, string> = {};
  if (check.node) {
    const node = await trx.selectFrom('nodes').select('id').where('id', '=', f.node_id).executeTakeFirst();
    if (!node) errors.node_id = 'no such node';
  }
  const profile = await trx.selectFrom('inbound_profiles').select('protocol').where('id', '=', f.profile_id).executeTakeFirst();
  if (!profile && check.profile) errors.profile_id = 'no such inbound profile';
  if (f.chain_id !== null && check.chain) {
    const chain = await trx.selectFrom('chains').select('id').where('id', '=', f.chain_id).executeTakeFirst();
    if (!chain) errors.chain_id = 'no such chain';
  }
  if (Object.keys(errors).length > 0) throw new ValidationError('invalid inbound', errors);
  // The chain rule lives with chains (and share-locks the chain against a concurrent hop edit).
  if (f.chain_id !== null && check.chain) await assertInboundFitsChain(trx, f.chain_id, f.node_id);
  return { protocol: profile?.protocol ?? 'unknown' };
}

export { lockNodePorts };

export async function assertPortFree(trx: Db, nodeId: string, port: number, exceptInboundId?: string): Promise<void> {
  const users = await portUsers(trx, nodeId, port, { inboundId: exceptInboundId });
  if (users.inbounds.length > 0) throw portTaken(nodeId, port, { inbounds: users.inbounds });
  if (users.chains.length > 0) throw portTaken(nodeId, port, { chains: [...new Set(users.chains)] });
}

function portTaken(nodeId: string, port: number, blockedBy: { inbounds?: string[]; chains?: string[] }): ConflictError {
  const [kind, ids] = blockedBy.inbounds ? ['inbound', blockedBy.inbounds] : ['chain hop of', blockedBy.chains ?? []];
  return new ConflictError(
    `port ${port} on node ${nodeId} is taken by ${kind} ${idList(ids)}`,
    { port: `taken on this node by ${kind} ${idList(ids)}` },
    { blocked_by: blockedBy },
  );
}

/** Maps the constraint errors of a lost race to the answers the checks would have given. */
export function mapInboundWriteError(f: InboundFields): (err: unknown) => never {
  return (err: unknown) => {
    if (isUniqueViolation(err, 'inbounds_node_port') || isUniqueViolation(err, 'inbounds_node_tag'))
      throw new ConflictError(`port ${f.port} on node ${f.node_id} is taken by another inbound`, { port: 'taken on this node' });
    if (isForeignKeyViolation(err, 'inbounds_node_id_fkey')) throw new ValidationError('invalid inbound', { node_id: 'no such node' });
    if (isForeignKeyViolation(err, 'inbounds_profile_id_fkey'))
      throw new ValidationError('invalid inbound', { profile_id: 'no such inbound profile' });
    if (isForeignKeyViolation(err, 'inbounds_chain_id_fkey')) throw new ValidationError('invalid inbound', { chain_id: 'no such chain' });
    throw err;
  };
}

export async function hopNodesOfChain(trx: Db, chainId: string | null): Promise<string[]> {
  if (chainId === null) return [];
  const rows = await trx.selectFrom('chain_hops').select('node_id').where('chain_id', '=', chainId).execute();
  return rows.map((r) => r.node_id);
}
