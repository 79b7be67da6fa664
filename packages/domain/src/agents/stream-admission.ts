import { UnauthenticatedError } from '../errors.ts';
import type { NodeIdentity } from '../pki/internal-ca.ts';
import type { DomainDeps } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/** What the agent says about itself in Hello (spec 2.1), already decoded. */
export interface AgentHello {
  hostname: string;
  os: string;
  arch: string;
  agent_version: string;
  xray_version: string;
  applied_revision: number;
}

export interface StreamTicket {
  node_id: string;
  /** Which replica holds the stream, and which stream it is (ends only its own session). */
  replica: string;
  session: string;
  /** Serial of the client certificate the stream was opened with. */
  serial: string;
}

const text = (v: string, max: number): string | null => v.trim().slice(0, max) || null;

/**
 * Admits a Sync stream (spec 4.1 rules 1, 6): the certificate's node must exist, be enabled
 * and present its current certificate (or, during a renewal, the one it replaces; a
 * re-enrolled node's old identity is refused). Stores the Hello on the node view and makes
 * this stream the node's current one: connectivity online, held by `ticket.replica`.
 * Returns the node's desired revision and whether the agent must be sent a DesiredState now
 * (spec 3.5: on open when Hello.applied_revision is lower than the desired revision).
 */
export async function openAgentStream(
  deps: DomainDeps,
  identity: NodeIdentity,
  ticket: StreamTicket,
  hello: AgentHello,
): Promise<{ desired_revision: number; send_desired_state: boolean }> {
  return unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    const node = await trx
      .selectFrom('nodes')
      .select(['id', 'admin_status', 'desired_revision', 'cert_serial', 'cert_previous_serial'])
      .where('id', '=', identity.node_id)
      .forUpdate()
      .executeTakeFirst();
    if (!node) throw new UnauthenticatedError('no such node');
    if (node.admin_status !== 'enabled') throw new UnauthenticatedError('the node is disabled');
    const current = node.cert_serial === identity.serial;
    if (!current && node.cert_previous_serial !== identity.serial) {
      throw new UnauthenticatedError('this certificate is no longer the node identity (the node was enrolled again)');
    }
    const now = deps.clock.now();
    const desired = Number(node.desired_revision);
    await trx
      .updateTable('nodes')
      .set({
        hostname: text(hello.hostname, 255),
        os: text(hello.os, 64),
        arch: text(hello.arch, 64),
        agent_version: text(hello.agent_version, 64),
        xray_version: text(hello.xray_version, 64),
        // The agent's int64, capped: never above the desired revision (nor beyond an int8).
        applied_revision: Math.min(Math.max(0, hello.applied_revision), desired),
        connectivity: 'online',
        stream_replica: ticket.replica,
        stream_session: ticket.session,
        stream_opened_at: now,
        last_seen_at: now,
        // The agent connects with its renewed certificate: the one it replaced is retired.
        ...(current && node.cert_previous_serial ? { cert_previous_serial: null } : {}),
      })
      .where('id', '=', node.id)
      .execute();
    return { desired_revision: desired, send_desired_state: hello.applied_revision < desired };
  });
}

/** The stream ended: offline, unless a newer stream of the node took over meanwhile. */
export async function closeAgentStream(deps: Pick<DomainDeps, 'db' | 'clock'>, ticket: StreamTicket): Promise<void> {
  await deps.db
    .updateTable('nodes')
    .set({ connectivity: 'offline', stream_replica: null, stream_session: null, last_seen_at: deps.clock.now() })
    .where('id', '=', ticket.node_id)
    .where('stream_session', '=', ticket.session)
    .execute();
}

export interface StreamStanding {
  node_id: string;
  /** Still allowed and still the node's current stream. */
  admitted: boolean;
  reason?: 'deleted' | 'disabled' | 'replaced' | 'retired';
  desired_revision: number;
}

/**
 * For a replica's open streams: which may stay (node present, enabled, still this session,
 * certificate not retired by a new enrollment)
 * and each node's desired revision. One query for any number of streams.
 */
export async function standingOfStreams(deps: Pick<DomainDeps, 'db'>, tickets: readonly StreamTicket[]): Promise<StreamStanding[]> {
  if (tickets.length === 0) return [];
  const rows = await deps.db
    .selectFrom('nodes')
    .select(['id', 'admin_status', 'desired_revision', 'stream_session', 'cert_serial', 'cert_previous_serial'])
    .where(
      'id',
      'in',
      tickets.map((t) => t.node_id),
    )
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return tickets.map((t) => {
    const r = byId.get(t.node_id);
    if (!r) return { node_id: t.node_id, admitted: false, reason: 'deleted', desired_revision: 0 };
    const desired_revision = Number(r.desired_revision);
    if (r.admin_status !== 'enabled') return { node_id: t.node_id, admitted: false, reason: 'disabled', desired_revision };
    if (r.stream_session !== t.session) return { node_id: t.node_id, admitted: false, reason: 'replaced', desired_revision };
    if (r.cert_serial !== t.serial && r.cert_previous_serial !== t.serial)
      return { node_id: t.node_id, admitted: false, reason: 'retired', desired_revision };
    return { node_id: t.node_id, admitted: true, desired_revision };
  });
}
