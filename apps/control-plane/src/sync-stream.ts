import {
  type AgentReply,
  type AgentStatus,
  type ApplyRecovery,
  closeAgentStream,
  type DomainDeps,
  type EngineReport,
  ingestUsageReport,
  isDatabaseUnavailable,
  isDomainError,
  type LoadedCa,
  type LogLine,
  newId,
  type OpenedStream,
  recordAgentUpgradeResult,
  recordApplyFailure,
  renewAgentCertificate,
  replyTopic,
  type Slots,
  type StreamOpening,
  type UsageIngestResult,
} from '@svc/domain';
import { type AgentMessage, LogSource, type ServerMessage } from '@svc/proto';
import { type CallContext, ServerError, Status } from 'nice-grpc';
import { type AdmissionLine, AdmissionRefused } from './admission-line.ts';
import { AgentSession } from './agent-session.ts';
import type { SnapshotSource } from './desired-state-source.ts';
import { toGrpcError, toGrpcStatus } from './errors.ts';
import { identityOf, UNAUTHENTICATED_DETAILS } from './identity-interceptor.ts';
import { describeFault, type Inbound, type InboundFault, textFault } from './inbound-guard.ts';
import { peerIp } from './peer.ts';
import type { StreamRegistry } from './stream-registry.ts';

export interface SyncDeps {
  deps: DomainDeps;
  ca: LoadedCa;
  registry: StreamRegistry;
  snapshots: SnapshotSource;
  /** A stream silent this long (status comes every 30 s) is taken for dead. */
  idleTimeoutMs: number;
  /** How long an agent may take to send Hello after opening the stream. */
  helloTimeoutMs?: number;
  /** Usage reports applied at once by this process (the rest wait their turn). */
  usageSlots: Slots;
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

/** svc_usage_*: what became of a report's entries (the reasons are UsageIngestResult's). */
function countUsage(deps: DomainDeps, result: UsageIngestResult, entries: number): void {
  const m = deps.metrics;
  if (!result.applied) {
    m.usageReports.inc({ result: 'replayed' });
    if (entries > 0) m.usageRefused.inc({ reason: 'replayed' }, entries);
    return;
  }
  m.usageReports.inc({ result: 'applied' });
  if (result.accepted > 0) m.usageIngested.inc(result.accepted);
  if (result.invalid > 0) m.usageRefused.inc({ reason: 'invalid' }, result.invalid);
  if (result.dropped > result.invalid) m.usageRefused.inc({ reason: 'not_served' }, result.dropped - result.invalid);
}

/** The standard gRPC trailer a client's retry honours: when to try again, in milliseconds. */
export const RETRY_PUSHBACK = 'grpc-retry-pushback-ms';

const sourceName = (s: LogSource): LogLine['source'] => (s === LogSource.AGENT ? 'agent' : 'xray');

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
    if (admitted.send_desired_state) session.desiredChanged();
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

    /**
     * One message of the agent. `fault` is what the decode step found (inbound-guard.ts): a
     * refused CertRenewal is answered with CertIssued.error and the stream stays open; log
     * lines that break the text rule are left out of their batch (Xray's lines can carry
     * what a client sent; one must not cut a node off); a bad ApplyResult, StatusReport or
     * second Hello ends the stream with the fault's status naming the field. UsageReport
     * entries are never marked: the domain drops a bad entry and the report is acknowledged.
     */
    const handle = async (m: AgentMessage, fault: InboundFault | null): Promise<void> => {
      if (fault && !m.certRenewal && !m.logs) throw new ServerError(fault.code, describeFault(fault));
      if (m.applyResult) {
        const r = m.applyResult;
        if (r.success) {
          session.applied(Number(r.revision));
          const recovered = await s.recordApplied(ticket.node_id, Number(r.revision));
          if (recovered)
            deps.log.info(
              {
                node_id: recovered.node_id,
                node_name: recovered.name,
                revision: recovered.revision,
                failed_revision: recovered.failed_revision,
              },
              'node applied its desired state again',
            );
        } else {
          const failed = await recordApplyFailure(deps, ticket.node_id, { revision: Number(r.revision), error: r.error });
          // Every failure is logged (a repeat after a reconnect too); node.apply_failed is raised once per revision.
          if (failed)
            deps.log.warn(
              {
                node_id: failed.node_id,
                node_name: failed.name,
                revision: failed.revision,
                applied_revision: failed.applied_revision,
                failing_since: failed.failing_since.toISOString(),
                repeat: !failed.first,
                error: failed.error,
              },
              'node failed to apply its desired state',
            );
        }
        deps.metrics.applyResults.inc({ result: r.success ? 'applied' : 'failed' });
      } else if (m.status) {
        const st = m.status;
        await s.recordStatus(ticket.node_id, {
          xray_running: st.xrayRunning,
          cpu_percent: st.cpuPercent,
          memory_used_bytes: Number(st.memoryUsedBytes),
          memory_total_bytes: Number(st.memoryTotalBytes),
          disk_used_bytes: Number(st.diskUsedBytes),
          disk_total_bytes: Number(st.diskTotalBytes),
          connections: st.connections,
          xray_uptime_seconds: Number(st.xrayUptimeSeconds),
        });
      } else if (m.usage) {
        const u = m.usage;
        const result = await s.usageSlots.run(() =>
          ingestUsageReport(deps, ticket.node_id, {
            report_id: u.reportId,
            entries: u.entries.map((e) => ({
              subscription_id: e.subscriptionId,
              uplink_bytes: e.uplinkBytes,
              downlink_bytes: e.downlinkBytes,
            })),
          }),
        );
        countUsage(deps, result, u.entries.length);
        // Counted on the node too (usage_entries_dropped); not_served: entries for subscriptions
        // this node does not serve, the sign of a node charging others.
        if (result.dropped > 0)
          deps.log.info(
            { node_id: ticket.node_id, report_id: String(u.reportId), dropped: result.dropped, not_served: result.not_served },
            'usage entries dropped',
          );
        session.send({ usageAck: { reportId: u.reportId } });
      } else if (m.logs) {
        let entries = m.logs.entries;
        if (fault) {
          if (!fault.field.startsWith('logs.entries.')) {
            deps.log.warn({ node_id: ticket.node_id, fault: describeFault(fault) }, 'a log batch was dropped');
            return;
          }
          entries = entries.filter((e) => textFault(e) === null);
          deps.log.warn(
            { node_id: ticket.node_id, command_id: m.logs.commandId, left_out: m.logs.entries.length - entries.length },
            'log lines that break the text rule were left out',
          );
        }
        const reply: AgentReply = {
          type: 'logs',
          eof: m.logs.eof,
          entries: entries.map((e) => ({ timestamp_ms: Number(e.timestampMs), source: sourceName(e.source), line: e.line })),
        };
        await deps.bus.publish(replyTopic(m.logs.commandId), reply);
      } else if (m.upgradeResult) {
        const r = m.upgradeResult;
        const state = await recordAgentUpgradeResult(deps, ticket.node_id, r);
        if (state)
          deps.log[state === 'failed' ? 'warn' : 'info'](
            { node_id: ticket.node_id, command_id: r.commandId, agent_version: r.agentVersion, ...(r.success ? {} : { error: r.error }) },
            state === 'failed' ? 'agent upgrade failed; the old agent runs on' : 'agent upgraded',
          );
      } else if (m.certRenewal) {
        // A refused renewal is answered (CertIssued.error, our extension) and the stream stays
        // open: the agent keeps its current certificate and may try again (issue 12.8).
        if (fault) {
          session.send({ certIssued: { clientCertPem: '', error: describeFault(fault) } });
          return;
        }
        try {
          const issued = await renewAgentCertificate(deps, s.ca, ticket.node_id, m.certRenewal.csrPem, { ip });
          session.send({ certIssued: { clientCertPem: issued.client_cert_pem, error: '' } });
        } catch (err) {
          if (!isDomainError(err) || err.type !== 'validation') throw err;
          const mapped = toGrpcError(err) as ServerError;
          session.send({ certIssued: { clientCertPem: '', error: mapped.details } });
        }
      } else if (m.hello) {
        deps.log.warn({ node_id: ticket.node_id }, 'a second Hello on one stream was ignored');
      }
    };

    const reading = (async () => {
      try {
        for (;;) {
          const r = await incoming.next();
          if (r.done && !session.ended) closedBy = 'the agent closed the stream';
          if (r.done || session.ended) break;
          touch();
          try {
            await handle(r.value.message, r.value.fault);
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
