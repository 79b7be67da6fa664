import { type DomainDeps, deviceDenialsOfNode } from '@svc/domain';
import type { AgentSession } from './agent-session.ts';

/** The last DeviceDenials sent on each stream (its fingerprint): an unchanged set is not sent again. */
const lastSent = new WeakMap<AgentSession, string>();

/**
 * Sends the node's DeviceDenials (the whole set, fleet-wide count; docs/limits.md) on its
 * stream: when the stream opens (even empty: it replaces what the agent held from before) and
 * whenever devices.denials-changed names the node (stream-registry.ts), unless it is the set
 * this stream has already.
 */
export async function sendDeviceDenials(deps: Pick<DomainDeps, 'db'>, session: AgentSession, opening = false): Promise<void> {
  const users = await deviceDenialsOfNode(deps.db, session.nodeId);
  if (session.ended) return;
  const fingerprint = JSON.stringify(users);
  if (!opening && lastSent.get(session) === fingerprint) return;
  lastSent.set(session, fingerprint);
  session.send({ deviceDenials: { users: users.map((u) => ({ subscriptionId: u.subscription_id, addresses: u.addresses })) } });
}
