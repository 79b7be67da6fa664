import { sql } from 'kysely';
import { certificateServedEvents } from '../certificates/certificate-rollouts.ts';
import { type DomainError, UnauthenticatedError, type UnprocessableError } from '../errors.ts';
import { recordEvent, recordEvents } from '../events/record-event.ts';
import { lockNodesInOrder } from '../fleet/lock-nodes.ts';
import { announceNodeViews } from '../live/admin-events.ts';
import type { NodeIdentity } from '../pki/internal-ca.ts';
import type { DomainDeps } from '../shared/context.ts';
import { retryOnConflict } from '../shared/db-errors.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import { AGENT_RELEASE, agentBecameOutdated, assertAgentVersionAllowed, isBelowMinimum } from './agent-version.ts';

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

export interface StreamOpening {
  identity: NodeIdentity;
  ticket: StreamTicket;
  hello: AgentHello;
}

export interface OpenedStream {
  desired_revision: number;
  send_desired_state: boolean;
  /** The node's name, for the gateway's log lines about the stream (an operator knows nodes by name). */
  node_name: string;
}

/**
 * Admits a Sync stream (spec 4.1 rules 1, 6): the certificate's node must exist, be enabled
 * and present its current certificate (or, during a renewal, the one it replaces; a
 * re-enrolled node's old identity is refused). Stores the Hello on the node view and makes
 * this stream the node's current one: connectivity online, held by `ticket.replica`.
 * Returns the node's desired revision and whether the agent must be sent a DesiredState now
 * (spec 3.5: on open when Hello.applied_revision is lower than the desired revision).
 */
/** What admitting streams needs: a unit of work, and the operator's agent version floor. */
export type StreamAdmissionDeps = UnitOfWorkDeps & Pick<DomainDeps, 'config'>;

export async function openAgentStream(
  deps: DomainDeps,
  identity: NodeIdentity,
  ticket: StreamTicket,
  hello: AgentHello,
): Promise<OpenedStream> {
  const [result] = await openAgentStreams(deps, [{ identity, ticket, hello }]);
  if (result instanceof Error) throw result;
  return result as OpenedStream;
}

/**
 * openAgentStream for many streams in one statement (issue 17.3: after a gateway restart the
 * whole fleet reconnects, and one transaction of four round trips per stream was most of the
 * database's work): one UPDATE admits every stream whose node is enabled and whose
 * certificate is the node's, atomically per row as the checked transaction was; the refused
 * are read again (one SELECT) to say why. Results in the order of `openings`; a refused one is
 * its UnauthenticatedError, or, for an authenticated agent below the operator's opt-in floor
 * (grpc.min_agent_version), an UnprocessableError, and writes nothing. Two openings of one node
 * go out one after the other (the later stream becomes the node's). A node whose agent now
 * reports an outdated version raises node.agent_outdated.
 */
export async function openAgentStreams(
  deps: StreamAdmissionDeps,
  openings: readonly StreamOpening[],
): Promise<Array<OpenedStream | DomainError>> {
  const results: Array<OpenedStream | DomainError> = new Array(openings.length);
  let left = openings.map((o, i) => ({ o, i }));
  while (left.length > 0) {
    const round = new Map<string, { o: StreamOpening; i: number }>();
    const later: typeof left = [];
    for (const x of left) {
      if (round.has(x.o.identity.node_id)) later.push(x);
      else round.set(x.o.identity.node_id, x);
    }
    await admitRound(deps, [...round.values()], results);
    left = later;
  }
  return results;
}

// The agent's int64, kept a safe integer (the statement caps it at the desired revision).
const revisionOf = (r: number) => Math.min(Math.max(0, Math.trunc(r)), Number.MAX_SAFE_INTEGER);

async function admitRound(
  deps: StreamAdmissionDeps,
  round: Array<{ o: StreamOpening; i: number }>,
  results: Array<OpenedStream | DomainError>,
): Promise<void> {
  // Rows locked in id order first (lockNodesInOrder: no deadlock against a revision bump or another batch).
  round.sort((a, b) => (a.o.identity.node_id < b.o.identity.node_id ? -1 : 1));
  const col = <T>(f: (o: StreamOpening) => T) => round.map(({ o }) => f(o));
  const now = deps.clock.now();
  const minimum = deps.config.grpc.min_agent_version;
  // Below the floor is decided here, but refused only by the statement, after it checked the
  // node and its certificate: a stranger's certificate is UNAUTHENTICATED whatever it names.
  const below = col((o) => isBelowMinimum(o.hello.agent_version, minimum));
  const admitted = await retryOnConflict(() =>
    unitOfWork(deps, async (uow) => {
      const trx = uow.db;
      await lockNodesInOrder(
        trx,
        col((o) => o.identity.node_id),
      );
      // `prior` reads the rows as they were before this statement (one snapshot for the whole
      // statement): the version each node reported before, to raise node.agent_outdated once.
      const r = await sql<{
        id: string;
        name: string;
        desired_revision: string;
        agent_version: string | null;
        prior_version: string | null;
        prior_presence: 'online' | 'offline' | null;
        prior_seen: Date | null;
      }>`
    with prior as (select id, agent_version, presence_announced, last_seen_at from nodes where id = any(${col((o) => o.identity.node_id)}::text[]))
    update nodes n
       set hostname = v.hostname,
           os = v.os,
           arch = v.arch,
           agent_version = v.agent_version,
           xray_version = v.xray_version,
           -- never above the desired revision: an agent cannot have applied one it was never sent
           applied_revision = least(v.applied, n.desired_revision),
           connectivity = 'online',
           presence_announced = 'online',
           stream_replica = v.replica,
           stream_session = v.session,
           stream_opened_at = ${now},
           last_seen_at = ${now},
           -- the agent connects with its renewed certificate: the one it replaced is retired
           cert_previous_serial = case when n.cert_serial = v.serial then null else n.cert_previous_serial end
      from unnest(
             ${col((o) => o.identity.node_id)}::text[], ${col((o) => o.identity.serial)}::text[],
             ${col((o) => o.ticket.replica)}::text[], ${col((o) => o.ticket.session)}::text[],
             ${col((o) => text(o.hello.hostname, 255))}::text[], ${col((o) => text(o.hello.os, 64))}::text[],
             ${col((o) => text(o.hello.arch, 64))}::text[], ${col((o) => text(o.hello.agent_version, 64))}::text[],
             ${col((o) => text(o.hello.xray_version, 64))}::text[], ${col((o) => String(revisionOf(o.hello.applied_revision)))}::int8[],
             ${below}::bool[]
           ) as v(id, serial, replica, session, hostname, os, arch, agent_version, xray_version, applied, below_minimum),
           prior p
     where n.id = v.id
       and p.id = n.id
       and n.admin_status = 'enabled'
       and (n.cert_serial = v.serial or n.cert_previous_serial = v.serial)
       and not v.below_minimum
    returning n.id, n.name, n.desired_revision, n.agent_version, p.agent_version as prior_version,
              p.presence_announced as prior_presence, p.last_seen_at as prior_seen`.execute(trx);
      uow.nodeViewsChanged(r.rows.map((row) => row.id));
      // A reconnecting agent may have applied a revision carrying a certificate's new material.
      await recordEvents(
        uow,
        await certificateServedEvents(
          uow,
          r.rows.map((row) => row.id),
        ),
        now,
      );
      // node.online once per outage announced (node-presence.ts): a reconnect within the grace raises nothing.
      await recordEvents(
        uow,
        r.rows
          .filter((row) => row.prior_presence !== 'online')
          .map((row) => ({
            type: 'node.online' as const,
            payload: {
              node_id: row.id,
              name: row.name,
              offline_since: row.prior_presence === 'offline' && row.prior_seen ? new Date(row.prior_seen).toISOString() : null,
              agent_version: row.agent_version,
            },
          })),
        now,
      );
      for (const row of r.rows)
        if (row.agent_version !== null && agentBecameOutdated(row.prior_version, row.agent_version))
          await recordEvent(
            uow,
            {
              type: 'node.agent_outdated',
              payload: {
                node_id: row.id,
                name: row.name,
                agent_version: row.agent_version,
                previous_agent_version: row.prior_version,
                release: AGENT_RELEASE,
              },
            },
            now,
          );
      return r;
    }),
  );
  const desired = new Map(admitted.rows.map((r) => [r.id, Number(r.desired_revision)]));
  const names = new Map(admitted.rows.map((r) => [r.id, r.name]));
  const refused = round.filter(({ o }) => !desired.has(o.identity.node_id));
  const why = new Map<string, DomainError>();
  if (refused.length > 0) {
    const rows = await deps.db
      .selectFrom('nodes')
      .select(['id', 'admin_status', 'cert_serial', 'cert_previous_serial'])
      .where(
        'id',
        'in',
        refused.map(({ o }) => o.identity.node_id),
      )
      .execute();
    const openingOf = new Map(refused.map(({ o }) => [o.identity.node_id, o]));
    for (const r of rows) {
      const o = openingOf.get(r.id) as StreamOpening;
      const current = r.cert_serial === o.identity.serial || r.cert_previous_serial === o.identity.serial;
      why.set(
        r.id,
        r.admin_status !== 'enabled'
          ? new UnauthenticatedError('the node is disabled')
          : !current
            ? new UnauthenticatedError('this certificate is no longer the node identity (the node was enrolled again)')
            : refusedByMinimum(o, minimum),
      );
    }
  }
  for (const { o, i } of round) {
    const d = desired.get(o.identity.node_id);
    results[i] =
      d === undefined
        ? (why.get(o.identity.node_id) ?? new UnauthenticatedError('no such node'))
        : { desired_revision: d, send_desired_state: o.hello.applied_revision < d, node_name: names.get(o.identity.node_id) ?? '' };
  }
}

/** The refusal of an authenticated agent the statement left out: below the operator's floor. */
function refusedByMinimum(o: StreamOpening, minimum: string | undefined): DomainError {
  try {
    assertAgentVersionAllowed(o.hello.agent_version, minimum);
  } catch (err) {
    return err as UnprocessableError;
  }
  // Not below the floor: the row changed between the statement and this read (enrolled again).
  return new UnauthenticatedError('this certificate is no longer the node identity (the node was enrolled again)');
}

/** The stream ended: offline, unless a newer stream of the node took over meanwhile. */
export async function closeAgentStream(deps: Pick<DomainDeps, 'db' | 'clock' | 'bus' | 'log'>, ticket: StreamTicket): Promise<void> {
  const result = await deps.db
    .updateTable('nodes')
    .set({ connectivity: 'offline', stream_replica: null, stream_session: null, last_seen_at: deps.clock.now() })
    .where('id', '=', ticket.node_id)
    .where('stream_session', '=', ticket.session)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) await announceNodeViews(deps, [ticket.node_id]);
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
    // One array parameter (a replica checks its streams 1,000 at a time: a list of 1,000 parameters planned anew each call).
    .where(sql<boolean>`id = any(${tickets.map((t) => t.node_id)}::text[])`)
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
