import { type AgentMessage, type Hello, type ServerMessage, ServerMessageDecoder } from '@svc/proto';
import { type Channel, ClientError, type Metadata, Status } from 'nice-grpc';
import type { Logger } from 'pino';
import { Backoff, pushbackDelay } from './backoff.ts';
import { connected, gatewayClient, syncChannel, syncCredentials } from './gateway-channel.ts';
import type { Identity } from './identity.ts';
import type { ResumableChannelCredentials } from './resumable-credentials.ts';

/**
 * The Sync stream, kept open for as long as the agent runs: Hello first (with the revision
 * applied on disk), then whatever the agent has to say; every ServerMessage is handed to the
 * handler. A broken stream is opened again after the backoff (1-60 s, jitter); the backoff
 * starts over after a stream that stayed up for a while. Messages queued while no stream is open
 * are not kept: what must survive (usage) is re-sent by its owner on every `open` event.
 */
export interface SessionHandler {
  hello(): Promise<Hello>;
  /** A stream is open and Hello was queued: send what must be (re-)sent now. */
  opened(): void;
  message(m: ServerMessage): void;
  /** The stream ended (before the next attempt). */
  closed(why: string): void;
}

/** A stream that lived this long resets the backoff. */
const HEALTHY_MS = 10_000;

/** How long one attempt waits for the channel to connect (it retries on its own meanwhile). */
const CONNECT_WAIT_MS = 30_000;

/**
 * A TLS ticket older than this (a day, ± 20% per agent) is replaced by one full handshake on a
 * side connection while the stream is up: tickets resume for 7 days from the handshake that
 * issued them, and a gateway restart after weeks of uptime must still find them valid.
 */
const TICKET_REFRESH_MS = 24 * 3600_000;

export class SyncSession {
  private outbox: AgentMessage[] = [];
  private wake: (() => void) | null = null;
  private stopped = false;
  private sleeping: { timer: NodeJS.Timeout; resolve: () => void } | null = null;
  private readonly backoff = new Backoff();
  /**
   * The channel of the current identity, kept across streams: it holds the TLS session (a
   * renewed certificate starts a new channel, and a new session), and a stream refused by the
   * gateway's admission line is tried again on the same connection. (A channel closed while its
   * connection attempt is backing off still connects once the gateway is back, grpc-js 1.14.3,
   * and that connection is never closed: a channel per attempt left one open connection on the
   * gateway per failed attempt of an outage.)
   */
  private channel: { certPem: string; creds: ResumableChannelCredentials; channel: Channel } | null = null;
  private readonly ticketRefreshMs = TICKET_REFRESH_MS * (0.8 + 0.4 * Math.random());
  private ticketTimer: NodeJS.Timeout | null = null;
  /** When the gateway's last status asked to come back later (grpc-retry-pushback-ms). */
  private pushback: string | undefined;
  /**
   * Sync's messages, decoded with what the DesiredState before them held: a big node's unchanged
   * users are not decoded again (@svc/proto server-message-decoder.ts), across reconnects too.
   */
  private readonly decoder = new ServerMessageDecoder();
  connected = false;

  constructor(
    private identity: () => Identity,
    private readonly handler: SessionHandler,
    private readonly log: Logger,
  ) {}

  /** Queues a message for the open stream; false (dropped) when none is open. */
  send(m: AgentMessage): boolean {
    if (!this.connected) return false;
    this.outbox.push(m);
    const w = this.wake;
    this.wake = null;
    w?.();
    return true;
  }

  /** Runs until stop(). */
  async run(): Promise<void> {
    while (!this.stopped) {
      const began = Date.now();
      const why = await this.once();
      this.connected = false;
      this.handler.closed(why);
      if (this.stopped) break;
      if (Date.now() - began >= HEALTHY_MS) this.backoff.reset();
      // The gateway's admission line was full: come back when it said (not counted as a failure).
      const delay = pushbackDelay(this.pushback) ?? this.backoff.next();
      this.log.info({ reason: why, retry_in_ms: delay }, 'Sync stream ended');
      await new Promise<void>((resolve) => {
        this.sleeping = { timer: setTimeout(resolve, delay), resolve };
      });
      this.sleeping = null;
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.ticketTimer) clearInterval(this.ticketTimer);
    this.connected = false;
    this.wake?.();
    this.channel?.channel.close();
    if (this.sleeping) {
      clearTimeout(this.sleeping.timer);
      this.sleeping.resolve();
    }
  }

  private async once(): Promise<string> {
    const identity = this.identity();
    if (this.channel?.certPem !== identity.certPem) {
      this.channel?.channel.close();
      const creds = syncCredentials(identity);
      this.channel = { certPem: identity.certPem, creds, channel: syncChannel(identity, creds) };
    }
    const channel = this.channel.channel;
    this.pushback = undefined;
    if (!(await connected(channel, Date.now() + CONNECT_WAIT_MS)))
      return this.stopped ? 'stopped' : `the gateway could not be reached within ${CONNECT_WAIT_MS / 1000} s`;
    let hello: Hello;
    try {
      hello = await this.handler.hello();
    } catch (err) {
      return `Hello not built: ${(err as Error).message}`;
    }
    this.ticketTimer ??= setInterval(() => {
      const creds = this.channel?.creds;
      if (this.connected && creds && creds.ticketAgeMs() > this.ticketRefreshMs) void creds.refreshTicket();
    }, 3600_000).unref();
    const abort = new AbortController();
    this.outbox = [{ hello }];
    this.connected = true;
    this.handler.opened();
    const self = this;
    async function* requests(): AsyncGenerator<AgentMessage> {
      while (!self.stopped && !abort.signal.aborted) {
        const m = self.outbox.shift();
        if (m) {
          yield m;
          continue;
        }
        await new Promise<void>((r) => {
          self.wake = r;
        });
      }
    }
    try {
      const onTrailer = (md: Metadata) => {
        this.pushback = md.get('grpc-retry-pushback-ms');
      };
      for await (const m of gatewayClient(channel, this.decoder).sync(requests(), { signal: abort.signal, onTrailer })) {
        try {
          this.handler.message(m);
        } catch (err) {
          this.log.error({ err }, 'server message not handled');
        }
      }
      return 'the gateway ended the stream';
    } catch (err) {
      if (err instanceof ClientError) {
        if (err.code === Status.UNAUTHENTICATED)
          this.log.error({ details: err.details }, 'the gateway refused this node (disabled, deleted, or its certificate is not accepted)');
        if (err.code === Status.FAILED_PRECONDITION)
          this.log.error(
            { details: err.details },
            'the gateway refused this stream (below its minimum agent version, it says so: upgrade svc-agent)',
          );
        return `${Status[err.code]}: ${err.details}`;
      }
      return (err as Error).message;
    } finally {
      this.connected = false;
      abort.abort();
      this.wake?.();
    }
  }
}
