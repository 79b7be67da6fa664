import type { StreamTicket } from '@svc/domain';
import type { ServerMessage } from '@svc/proto';
import { ServerError, type Status } from 'nice-grpc';
import type { SnapshotSource } from './desired-state-source.ts';
import { preEncoded } from './pre-encoded.ts';

/**
 * One open Sync stream, from the server's side: the queue of messages for the agent and the
 * coalescing of desired states. A DesiredState is not queued per change: a change only
 * marks the session dirty, and the writer compiles the latest snapshot when it gets to it,
 * so a burst of changes (or a slow agent, whose writes wait for the socket to drain) yields
 * one send of the newest revision (spec 3.5: intermediate revisions are skipped).
 */
export class AgentSession {
  private readonly queue: ServerMessage[] = [];
  private wake: (() => void) | null = null;
  private ending: ServerError | 'done' | null = null;
  private desiredDirty = false;
  /**
   * The newest revision the changes since the last compile named (Infinity: a change that
   * named none). A compile that already yielded it makes them moot: a reconcile or a
   * nodes.changed landing while a 100,000-user node compiles would otherwise compile it again
   * only to find nothing newer (bench/BENCHMARKS.md, 2026-11-28).
   */
  private wanted = 0;
  /** The newest revision the agent has or was sent. */
  private knownRevision: number;

  constructor(
    readonly ticket: StreamTicket,
    appliedRevision: number,
    private readonly snapshots: SnapshotSource,
    private readonly onError?: (err: unknown) => void,
  ) {
    this.knownRevision = appliedRevision;
  }

  get nodeId(): string {
    return this.ticket.node_id;
  }

  get ended(): boolean {
    return this.ending !== null;
  }

  /** Why the server ended the stream (the status the agent got); null while open or when it ended cleanly. */
  get endReason(): string | null {
    return this.ending instanceof ServerError ? this.ending.details : null;
  }

  send(message: ServerMessage): void {
    if (this.ending) return;
    this.queue.push(message);
    this.poke();
  }

  /** The node's desired state may have changed: send the latest if it is newer than what the agent has. */
  desiredChanged(desiredRevision?: number): void {
    if (this.ending) return;
    if (desiredRevision !== undefined && desiredRevision <= this.knownRevision) return;
    this.desiredDirty = true;
    this.wanted = Math.max(this.wanted, desiredRevision ?? Number.POSITIVE_INFINITY);
    this.poke();
  }

  /** The agent applied (or reports having) this revision. */
  applied(revision: number): void {
    if (revision > this.knownRevision) this.knownRevision = revision;
  }

  /** Ends the stream: with a status the agent sees, or cleanly. */
  end(status?: { code: Status; message: string }): void {
    if (this.ending) return;
    this.ending = status ? new ServerError(status.code, status.message) : 'done';
    this.poke();
  }

  /** What the handler yields to nice-grpc; writes wait for the agent's socket to drain. */
  async *outgoing(): AsyncGenerator<ServerMessage> {
    while (true) {
      if (this.ending) {
        if (this.ending === 'done') return;
        throw this.ending;
      }
      const next = this.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.desiredDirty) {
        this.desiredDirty = false;
        const wanted = this.wanted;
        this.wanted = 0;
        if (wanted <= this.knownRevision) continue;
        let snapshot: Awaited<ReturnType<SnapshotSource>>;
        try {
          snapshot = await this.snapshots(this.nodeId, Number.isFinite(wanted) ? wanted : undefined);
        } catch (err) {
          // The database briefly away: the stream stays, the compile is retried shortly.
          this.onError?.(err);
          const retry = setTimeout(() => this.desiredChanged(), 1000);
          retry.unref();
          continue;
        }
        if (snapshot && snapshot.revision > this.knownRevision && !this.ending) {
          this.knownRevision = snapshot.revision;
          const revision = BigInt(snapshot.revision);
          yield snapshot.encoded
            ? preEncoded({ desiredState: { revision, config: undefined } }, snapshot.encoded)
            : { desiredState: { revision, config: snapshot.config } };
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
