import {
  type AgentCommand,
  type AgentCommandRequest,
  type AgentReply,
  type DomainDeps,
  heartbeatReplica,
  type OpenedStreamNotice,
  openedStreams,
  retireReplica,
  type StreamStanding,
  standingOfStreams,
  sweepDeadReplicas,
  TOPICS,
  type Unsubscribe,
} from '@svc/domain';
import { type Command, LogSource } from '@svc/proto';
import { createTurnBatcher } from '@svc/runtime';
import { Status } from 'nice-grpc';
import type { AgentSession } from './agent-session.ts';
import { sendDeviceDenials } from './device-denials.ts';

export interface RegistryTiming {
  /** How often held streams are checked against the database (catches lost bus messages). */
  reconcileMs: number;
  /** How often this replica proves it is alive. */
  heartbeatMs: number;
  /** A replica silent this long is dead; its nodes go offline. */
  staleAfterMs: number;
}

export const DEFAULT_TIMING: RegistryTiming = { reconcileMs: 5000, heartbeatMs: 5000, staleAfterMs: 20_000 };

const CHUNK = 1000;

const REASONS: Record<NonNullable<StreamStanding['reason']>, { code: Status; message: string }> = {
  deleted: { code: Status.UNAUTHENTICATED, message: 'the node was deleted' },
  disabled: { code: Status.UNAUTHENTICATED, message: 'the node is disabled' },
  retired: { code: Status.UNAUTHENTICATED, message: 'the node was enrolled again; this certificate is retired' },
  replaced: { code: Status.ABORTED, message: 'replaced by a newer stream of this node' },
};

function toCommand(id: string, c: AgentCommand): Command {
  const source = (s: 'agent' | 'xray') => (s === 'agent' ? LogSource.AGENT : LogSource.XRAY);
  switch (c.kind) {
    case 'restart_xray':
      return { commandId: id, restartXray: {} };
    case 'get_logs':
      return { commandId: id, getLogs: { source: source(c.source), limit: c.limit } };
    case 'start_log_stream':
      return { commandId: id, startLogStream: { source: source(c.source) } };
    case 'stop_log_stream':
      return { commandId: id, stopLogStream: {} };
    case 'upgrade_agent':
      return { commandId: id, upgradeAgent: { version: c.version, url: c.url, sha256: c.sha256 } };
  }
}

/**
 * The Sync streams this replica holds, one per node, and everything that reaches them from
 * outside: nodes.changed (push the latest desired state, or end a stream whose node was
 * disabled, deleted or re-enrolled), a newer stream of the node on another replica (this one
 * ends), agent commands from the admin API. A timer re-reads every held node's standing so a
 * lost bus message costs seconds, not correctness; another keeps this replica's liveness row
 * fresh and sets offline the nodes of replicas that died.
 */
export class StreamRegistry {
  private readonly sessions = new Map<string, AgentSession>();
  private readonly unsubscribes: Unsubscribe[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private opened: OpenedStreamNotice[] = [];
  /**
   * One read for a burst of changes: the messages of one commit arrive together. Unbounded,
   * because check() walks the ids in chunks one after another; a failure is logged once per
   * burst and never reaches the (unawaited) callers.
   */
  private readonly checkSoon = createTurnBatcher<string, void>({
    maxBatch: Number.POSITIVE_INFINITY,
    run: async (ids) => {
      await this.check(ids).catch((err) =>
        this.deps.log.warn({ err }, 'node change not applied to its stream; the reconciliation retries'),
      );
      return () => undefined;
    },
  });

  constructor(
    private readonly deps: DomainDeps,
    readonly replicaId: string,
    private readonly timing: RegistryTiming = DEFAULT_TIMING,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  async start(): Promise<void> {
    await heartbeatReplica(this.deps, this.replicaId);
    const bus = this.deps.bus;
    this.unsubscribes.push(
      await bus.subscribe(TOPICS.nodesChanged, (m) => {
        for (const id of (m as { ids?: string[] }).ids ?? []) if (this.sessions.has(id)) void this.checkSoon(id);
      }),
      await bus.subscribe(TOPICS.streamOpened, (m) => {
        for (const { node_id, session } of openedStreams(m)) {
          const held = this.sessions.get(node_id);
          if (held && held.ticket.session !== session) held.end(REASONS.replaced);
        }
      }),
      await bus.subscribe(TOPICS.agentCommands, (m) => this.deliverCommand(m as AgentCommandRequest)),
      // Issue 36: the fleet-wide device count changed these nodes' DeviceDenials; the ones held here send theirs.
      await bus.subscribe(TOPICS.deviceDenialsChanged, (m) => {
        for (const id of (m as { ids?: string[] }).ids ?? []) {
          const session = this.sessions.get(id);
          if (session)
            void sendDeviceDenials(this.deps, session).catch((err) =>
              this.deps.log.warn({ err, node_id: id }, 'device denials not sent; the next change or reconnect sends them'),
            );
        }
      }),
    );
    const every = (ms: number, fn: () => Promise<unknown>) => {
      const t = setInterval(() => void fn().catch((err) => this.deps.log.warn({ err }, 'gateway housekeeping failed')), ms);
      t.unref();
      this.timers.push(t);
    };
    every(this.timing.reconcileMs, () => this.check([...this.sessions.keys()]));
    // When did our own heartbeat last succeed, and since when have we been beating again
    // after missing some (monotonic time: our own process's gaps, not the business clock).
    let lastBeat = performance.now();
    let beatingSince = Number.NEGATIVE_INFINITY;
    every(this.timing.heartbeatMs, async () => {
      await heartbeatReplica(this.deps, this.replicaId);
      const now = performance.now();
      if (now - lastBeat > 2 * this.timing.heartbeatMs) beatingSince = now;
      lastBeat = now;
      // Back from a gap of our own (the database away, a stalled process): every other replica
      // was cut off too and has not beaten since. Their silence is counted from our return, so
      // they get the whole staleness window to beat again before their nodes are set offline;
      // otherwise the first replica back after a PostgreSQL outage longer than the window set
      // every other replica's nodes offline and their streams ended 'replaced' (a reconnect of
      // most of the fleet).
      if (now - beatingSince < this.timing.staleAfterMs) return;
      const offline = await sweepDeadReplicas(this.deps, this.timing.staleAfterMs, this.replicaId);
      if (offline > 0) this.deps.log.info({ nodes: offline }, 'nodes of a silent gateway replica set offline');
    });
  }

  /**
   * Tells the other replicas (and admin processes' log tails) that this stream is the node's
   * now: a replica holding an older one ends it. The streams opened in one turn go in one
   * message (a reconnecting fleet opens thousands a second).
   */
  announceOpened(notice: OpenedStreamNotice): void {
    this.opened.push(notice);
    if (this.opened.length > 1) return;
    setImmediate(() => {
      const streams = this.opened;
      this.opened = [];
      void this.deps.bus
        .publish(TOPICS.streamOpened, { streams })
        .catch((err) => this.deps.log.warn({ err, streams: streams.length }, 'stream hand-over not announced'));
    });
  }

  /** Makes `session` the node's stream here; a previous local one ends. */
  attach(session: AgentSession): void {
    const previous = this.sessions.get(session.nodeId);
    this.sessions.set(session.nodeId, session);
    if (previous && previous !== session) previous.end(REASONS.replaced);
  }

  detach(session: AgentSession): void {
    if (this.sessions.get(session.nodeId) === session) this.sessions.delete(session.nodeId);
  }

  get(nodeId: string): AgentSession | undefined {
    return this.sessions.get(nodeId);
  }

  /** Ends every stream (the agents reconnect elsewhere) and retires this replica. */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    for (const u of this.unsubscribes) await u().catch(() => {});
    for (const s of this.sessions.values()) s.end({ code: Status.UNAVAILABLE, message: 'the gateway is shutting down' });
    await retireReplica(this.deps, this.replicaId).catch((err) => this.deps.log.warn({ err }, 'replica not retired'));
  }

  /** Re-reads the standing of these nodes' streams: end the refused, push newer revisions. */
  private async check(nodeIds: readonly string[]): Promise<void> {
    for (let i = 0; i < nodeIds.length; i += CHUNK) {
      const sessions = nodeIds
        .slice(i, i + CHUNK)
        .map((id) => this.sessions.get(id))
        .filter((s): s is AgentSession => s !== undefined);
      const standing = await standingOfStreams(
        this.deps,
        sessions.map((s) => s.ticket),
      );
      standing.forEach((st, k) => {
        const session = sessions[k] as AgentSession;
        if (this.sessions.get(session.nodeId) !== session) return;
        if (!st.admitted) session.end(REASONS[st.reason ?? 'deleted']);
        else session.desiredChanged(st.desired_revision);
      });
    }
  }

  private deliverCommand(req: AgentCommandRequest): void {
    const session = this.sessions.get(req.node_id);
    if (!session || session.ended) return;
    session.send({ command: toCommand(req.command_id, req.command) });
    const accepted: AgentReply = { type: 'accepted' };
    void this.deps.bus.publish(req.reply_to, accepted).catch(() => {});
  }
}
