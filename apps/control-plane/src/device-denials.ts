import { type DomainDeps, deviceDenialsOfNode, refusedAddresses } from '@svc/domain';
import { createTurnBatcher } from '@svc/runtime';
import type { AgentSession } from './agent-session.ts';

/** A node's DeviceDenials as the domain gives them. */
export type NodeDenials = Awaited<ReturnType<typeof deviceDenialsOfNode>>;

/** The last DeviceDenials sent on each stream (its fingerprint): an unchanged set is not sent again. */
const lastSent = new WeakMap<AgentSession, string>();

/** Each database's reader (gateways of one process may use different ones). */
const readers = new WeakMap<DomainDeps['db'], (nodeId: string) => Promise<NodeDenials>>();

/**
 * Nodes' DeviceDenials read together (createTurnBatcher, one batch at a time): the nodes asked for
 * in one turn, or while a batch runs, go out in the next batch, so every caller gets a read that
 * began after it asked (never one that may predate a denial it must see). `load` answers a batch.
 */
export function denialsReader(
  load: (nodeIds: string[]) => Promise<(nodeId: string) => NodeDenials>,
): (nodeId: string) => Promise<NodeDenials> {
  return createTurnBatcher<string, NodeDenials>({ maxBatch: 1000, maxInFlight: 1, run: load });
}

function readerOf(db: DomainDeps['db']): (nodeId: string) => Promise<NodeDenials> {
  let reader = readers.get(db);
  if (!reader) {
    // The fleet's refused addresses once for the batch, then each node's part of them (no query when nothing is refused).
    reader = denialsReader(async (nodeIds) => {
      const refused = await refusedAddresses(db);
      const sets = await Promise.all(nodeIds.map((id) => deviceDenialsOfNode(db, id, refused)));
      const byNode = new Map(nodeIds.map((id, i) => [id, sets[i] as NodeDenials]));
      return (id) => byNode.get(id) ?? [];
    });
    readers.set(db, reader);
  }
  return reader;
}

/**
 * Sends the node's DeviceDenials (the whole set, fleet-wide count; docs/limits.md) on its
 * stream: when the stream opens (even empty: it replaces what the agent held from before) and
 * whenever devices.denials-changed names the node (stream-registry.ts), unless it is the set
 * this stream has already. Read with the other streams that ask together (denialsReader): a
 * reconnect storm of 10,000 agents, or one change naming many nodes, reads the fleet's refused
 * addresses a few times instead of once a stream.
 */
export async function sendDeviceDenials(deps: Pick<DomainDeps, 'db'>, session: AgentSession, opening = false): Promise<void> {
  const users = await readerOf(deps.db)(session.nodeId);
  if (session.ended) return;
  const fingerprint = JSON.stringify(users);
  if (!opening && lastSent.get(session) === fingerprint) return;
  lastSent.set(session, fingerprint);
  session.send({ deviceDenials: { users: users.map((u) => ({ subscriptionId: u.subscription_id, addresses: u.addresses })) } });
}
