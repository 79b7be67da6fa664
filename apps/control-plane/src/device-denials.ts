import { type DomainDeps, deviceDenialsOfNode, type RefusedAddresses, refusedAddresses } from '@svc/domain';
import type { AgentSession } from './agent-session.ts';

/** The last DeviceDenials sent on each stream (its fingerprint): an unchanged set is not sent again. */
const lastSent = new WeakMap<AgentSession, string>();

/** The fleet's refused addresses, one shared read per database (gateways of one process may use different ones). */
const fleetReads = new WeakMap<DomainDeps['db'], () => Promise<RefusedAddresses>>();

/**
 * Sends the node's DeviceDenials (the whole set, fleet-wide count; docs/limits.md) on its
 * stream: when the stream opens (even empty: it replaces what the agent held from before) and
 * whenever devices.denials-changed names the node (stream-registry.ts), unless it is the set
 * this stream has already. The fleet's refused addresses are read once for every stream that
 * asks while a read waits to start (coalescedRead): a reconnect storm of 10,000 agents, or one
 * change that names many nodes, is a few reads instead of one a stream.
 */
export async function sendDeviceDenials(deps: Pick<DomainDeps, 'db'>, session: AgentSession, opening = false): Promise<void> {
  let fleet = fleetReads.get(deps.db);
  if (!fleet) {
    fleet = coalescedRead(() => refusedAddresses(deps.db));
    fleetReads.set(deps.db, fleet);
  }
  const refused = await fleet();
  const users = refused.length === 0 ? [] : await deviceDenialsOfNode(deps.db, session.nodeId, refused);
  if (session.ended) return;
  const fingerprint = JSON.stringify(users);
  if (!opening && lastSent.get(session) === fingerprint) return;
  lastSent.set(session, fingerprint);
  session.send({ deviceDenials: { users: users.map((u) => ({ subscriptionId: u.subscription_id, addresses: u.addresses })) } });
}

/**
 * `read` shared by callers, each given a read that started after it asked: with none running one
 * starts at once; while one runs (it may have started before a change the caller must see), the
 * caller joins the next, which starts when that one settles. At most one read runs and one waits.
 */
export function coalescedRead<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | null = null;
  let next: Promise<T> | null = null;
  const start = (): Promise<T> => {
    const p: Promise<T> = read().finally(() => {
      if (running === p) running = null;
    });
    running = p;
    return p;
  };
  return () => {
    if (!running) return start();
    if (!next) {
      const settled = running.then(
        () => undefined,
        () => undefined,
      );
      next = settled.then(() => {
        next = null;
        return start();
      });
    }
    return next;
  };
}
