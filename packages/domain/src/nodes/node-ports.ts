import type { Db } from '@svc/db';
import { advisoryXactLock } from '../shared/locks.ts';

/**
 * A node's ports are shared by its inbounds and the chain hops placed on it; no single
 * constraint spans both tables. Every transaction that takes a port on a node (inbound
 * create/port change, chain hops) locks the node's ports first, in id order so two
 * transactions never wait on each other crosswise, then checks with `portUsers`.
 */
export async function lockNodePorts(trx: Db, nodeIds: Iterable<string>): Promise<void> {
  for (const id of [...new Set(nodeIds)].sort()) await advisoryXactLock(trx, `svc.node-ports.${id}`);
}

export interface PortUsers {
  inbounds: string[];
  chains: string[];
}

/** Who listens on `port` of `nodeId`: inbounds, and chain hops (of chains other than `exceptChainId`). */
export async function portUsers(
  trx: Db,
  nodeId: string,
  port: number,
  except: { inboundId?: string | undefined; chainId?: string | undefined } = {},
): Promise<PortUsers> {
  let iq = trx.selectFrom('inbounds').select('id').where('node_id', '=', nodeId).where('port', '=', port);
  if (except.inboundId) iq = iq.where('id', '!=', except.inboundId);
  let cq = trx.selectFrom('chain_hops').select('chain_id').where('node_id', '=', nodeId).where('port', '=', port);
  if (except.chainId) cq = cq.where('chain_id', '!=', except.chainId);
  const inbounds = await iq.execute();
  const chains = await cq.execute();
  return { inbounds: inbounds.map((r) => r.id), chains: chains.map((r) => r.chain_id) };
}
