import {
  type AgentStatus,
  type ApplyRecovery,
  closeAgentStream,
  type DomainDeps,
  type EngineReport,
  isDatabaseUnavailable,
  type LoadedCa,
  newId,
  type OpenedStream,
  type Slots,
  type StreamOpening,
} from '@svc/domain';
import type { AgentMessage, ServerMessage } from '@svc/proto';
import { type CallContext, ServerError, Status } from 'nice-grpc';
import { type AdmissionLine, AdmissionRefused } from './admission-line.ts';
import { handleAgentMessage } from './agent-messages.ts';
import { AgentSession } from './agent-session.ts';
import type { SnapshotSource } from './desired-state-source.ts';
import { sendDeviceDenials } from './device-denials.ts';
import { toGrpcError, toGrpcStatus } from './errors.ts';
import { identityOf, UNAUTHENTICATED_DETAILS } from './identity-interceptor.ts';
import { describeFault, type Inbound } from './inbound-guard.ts';
import { peerIp } from './peer.ts';
import type { StreamRegistry } from './stream-registry.ts';
import type { UsageFolder } from './usage-folder.ts';

export interface SyncDeps {
  deps: DomainDeps;
  ca: LoadedCa;
  registry: StreamRegistry;
  snapshots: SnapshotSource;
  /** A stream silent this long (status comes every 30 s) is taken for dead. */
  idleTimeoutMs: number;
  /** How long an agent may take to send Hello after opening the stream. */
  helloTimeoutMs?: number;
  /** Usage reports staged at once by this process (the rest wait their turn). */
  usageSlots: Slots;
  /** Credits staged usage (usage-folder.ts); a report's acknowledgement waits on its room(). */
  usageFolder: UsageFolder;
  /** Writes a successful ApplyResult (appliedRevisionWriter gathers them into one statement per turn); with the failure it cleared. */
  recordApplied: (nodeId: string, revision: number) => Promise<ApplyRecovery | undefined>;
  /** Writes a StatusReport (statusReportWriter: one statement per turn). */
  recordStatus: (nodeId: string, status: AgentStatus) => Promise<void>;
  /** Bounds how many streams are admitted a second and at once; the rest wait in order (admission-line.ts). */
  admission: AdmissionLine;
  /** adoptEngines before admission (engine-adoptions.ts): the node's new desired revision when its engine compiles differently, else null. */
  adoptEngine: (report: EngineReport) => Promise<number | null>;
  /** openAgentStream, gathered into one statement per turn (stream-openings.ts). */
  openStream: (opening: StreamOpening) => Promise<OpenedStream>;
}

/** The standard gRPC trailer a client's retry honours: when to try again, in milliseconds. */
export const RETRY_PUSHBACK = 'grpc-retry-pushback-ms';

async function first<T>(it: AsyncIterator<T>, timeoutMs: number): Promise<IteratorResult<T> | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      it.next(),
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sync (spec 4.1): admission by the verified certificate, Hello first, then everything
 * multiplexed: desired states out, apply results, status, usage (acknowledged), logs and
 * certificate renewals in, commands out.
 */
export function syncHandler(s: SyncDeps) {
  const { deps, registry } = s;
  return async function* sync(requests: AsyncIterable<Inbound<AgentMessage>>, ctx: CallContext): AsyncGenerator<ServerMessage> {
    const identity = identityOf(ctx.metadata);
    if (!identity) throw new ServerError(Status.UNAUTHENTICATED, UNAUTHENTICATED_DETAILS);
    const incoming = requests[Symbol.asyncIterator]();
    const opening = await first(incoming, s.helloTimeoutMs ?? 30_000);
    if (opening === 'timeout') throw new ServerError(Status.DEADLINE_EXCEEDED, 'no Hello within 30 s of opening the stream');
    if (opening.done) return;
    // A Hello that breaks the text rule or its size bound ends the stream naming the field.
    const openingFault = opening.value.fault;
    if (openingFault) throw new ServerError(openingFault.code, describeFault(openingFault));
    const hello = opening.value.message.hello;
    if (!hello) throw new ServerError(Status.FAILED_PRECONDITION, 'the first message on the stream must be Hello');

    // In line: at most admissions_per_second a second and admission_concurrency at once.
    let release: () => void;
    try {
      release = await s.admission.enter(identity.node_id, ctx.signal);
    } catch (err) {
      if (!(err instanceof AdmissionRefused)) throw err;
      if (err.reason === 'line-full') ctx.trailer.set(RETRY_PUSHBACK, String(err.retryAfterMs));
      throw new ServerError(err.reason === 'replaced' ? Status.ABORTED : Status.UNAVAILABLE, err.message);
    }
    const ticket = { node_id: identity.node_id, replica: registry.replicaId, session: newId('stm'), serial: identity.serial };
    const applied = Number(hello.appliedRevision < 0n ? 0n : hello.appliedRevision);
    let admitted: OpenedStream;
    try {
      // The engine first: a node now on an engine that compiles differently gets a new revision,
      // compiled for it, which the admission then finds newer than the agent's (docs/agent-gateway.md, "Engines").
      await s.adoptEngine({ node_id: identity.node_id, serial: identity.serial, xray_version: hello.xrayVersion });
      admitted = await s.openStream({
        identity,
        ticket,
        hello: {
          hostname: hello.hostname,
          os: hello.os,
          arch: hello.arch,
          agent_version: hello.agentVersion,
          xray_version: hello.xrayVersion,
          applied_revision: applied,
        },
      });
    } catch (err) {
      throw toGrpcStatus(err, deps.log, 'stream not opened');
    } finally {
      release();
    }
    const session = new AgentSession(ticket, applied, s.snapshots, (err) =>
      deps.log.error({ err, node_id: ticket.node_id }, 'desired state not compiled; retrying'),
    );
    registry.attach(session);
    deps.metrics.streamsOpen.inc();
    registry.announceOpened({ node_id: ticket.node_id, session: ticket.session, replica: ticket.replica });
    // Issue 36: the control plane's clock first; the agent measures not_after_ms from it (ServerClock).
    session.send({ clock: { nowMs: BigInt(deps.clock.now().getTime()) } });
    if (admitted.send_desired_state) session.desiredChanged(admitted.desired_revision);
    // Issue 36: the fleet-wide device count's refusals for this node, whole (device-denials.ts).
    void sendDeviceDenials(deps, session, true).catch((err) =>
      deps.log.warn({ err, node_id: ticket.node_id }, 'device denials not sent on stream open'),
    );
    const ip = peerIp(ctx.peer);
    const node = { node_id: ticket.node_id, node_name: admitted.node_name, address: ip, session: ticket.session };
    const openedAt = Date.now();
    deps.log.info(
      {
        ...node,
        hostname: hello.hostname,
        agent_version: hello.agentVersion,
        xray_version: hello.xrayVersion,
        applied_revision: applied,
        desired_revision: admitted.desired_revision,
      },
      `agent connected: node ${admitted.node_name} (${ticket.node_id}) from ${ip ?? 'an unknown address'}, agent version ${hello.agentVersion}, engine ${hello.xrayVersion}`,
    );
    // Why the stream ended when the server did not end it with a status (AgentSession.endReason).
    let closedBy = 'the stream ended';

    const onAbort = () => {
      if (!session.ended) closedBy = 'the agent went away (the call was cancelled or the connection dropped)';
      session.end();
    };
    ctx.signal.addEventListener('abort', onAbort);
    let idle: NodeJS.Timeout | undefined;
    // One timer per stream, pushed back by each message (refresh, not a new timer per message).
    const touch = () => {
      if (idle) idle.refresh();
      else
        idle = setTimeout(
          () => session.end({ code: Status.UNAVAILABLE, message: `no message from the agent for ${Math.round(s.idleTimeoutMs / 1000)} s` }),
          s.idleTimeoutMs,
        );
    };
    touch();

    const scope = { s, session, nodeId: ticket.node_id, ip };

    const reading = (async () => {
      try {
        for (;;) {
          const r = await incoming.next();
          if (r.done && !session.ended) closedBy = 'the agent closed the stream';
          if (r.done || session.ended) break;
          touch();
          try {
            await handleAgentMessage(scope, r.value.message, r.value.fault);
          } catch (err) {
            const mapped = toGrpcError(err);
            // A refused message (bad text in an ApplyResult, a node disabled meanwhile) ends the
            // stream with its status; anything else (the database briefly away) is logged and left unanswered,
            // so the agent sends it again (usage stays buffered until acknowledged).
            if (mapped instanceof ServerError) {
              session.end({ code: mapped.code, message: mapped.details });
              break;
            }
            // The database away (a restart, a failover): end the stream UNAVAILABLE rather than
            // read on. Left open, the next UsageReport could be credited once the database is back
            // and this one, sent again later, refused as older (lost usage); an ApplyResult would
            // never be sent again (the node shown behind). On reconnect the agent sends its
            // applied revision in Hello and every unacknowledged report in order.
            if (isDatabaseUnavailable(err)) {
              deps.log.warn({ node: ticket.node_id, err: { message: (err as Error).message } }, 'database unavailable; stream ended');
              session.end({ code: Status.UNAVAILABLE, message: 'the database is not reachable; reconnect' });
              break;
            }
            deps.log.error({ err, node_id: ticket.node_id }, 'agent message not processed');
          }
        }
      } catch (err) {
        if (!session.ended) closedBy = `the connection was lost (${(err as Error)?.message ?? String(err)})`;
        deps.log.debug({ err, node_id: ticket.node_id }, 'agent stream read ended');
      }
      session.end();
    })();
    // Not awaited at the end: after a server-side end the reader may wait on a peer that is gone.
    void reading;

    try {
      yield* session.outgoing();
    } finally {
      clearTimeout(idle);
      ctx.signal.removeEventListener('abort', onAbort);
      session.end();
      registry.detach(session);
      deps.metrics.streamsOpen.dec();
      await closeAgentStream(deps, ticket).catch((err) => deps.log.warn({ err, node_id: ticket.node_id }, 'stream end not recorded'));
      const reason = session.endReason ?? closedBy;
      deps.log.info(
        { ...node, reason, connected_for_s: Math.round((Date.now() - openedAt) / 1000) },
        `agent disconnected: node ${admitted.node_name} (${ticket.node_id}): ${reason}`,
      );
    }
  };
}
