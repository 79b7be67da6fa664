import type { AgentMessage, Hello, ServerMessage } from '@svc/proto';
import { ClientError, type Metadata, Status } from 'nice-grpc';
import type { Logger } from 'pino';
import { Backoff, pushbackDelay } from './backoff.ts';
import { gatewayClient, syncChannel, syncCredentials } from './gateway-channel.ts';
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
  private current: { close(): void } | null = null;
  private sleeping: { timer: NodeJS.Timeout; resolve: () => void } | null = null;
  private readonly backoff = new Backoff();
  /** The TLS session of the current identity (a renewed certificate starts a new one). */
  private credentials: { certPem: string; creds: ResumableChannelCredentials } | null = null;
  private readonly ticketRefreshMs = TICKET_REFRESH_MS * (0.8 + 0.4 * Math.random());
  private ticketTimer: NodeJS.Timeout | null = null;
  /** When the gateway's last status asked to come back later (grpc-retry-pushback-ms). */
  private pushback: string | undefined;
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
    this.current?.close();
    if (this.sleeping) {
      clearTimeout(this.sleeping.timer);
      this.sleeping.resolve();
    }
  }

  private async once(): Promise<string> {
    let hello: Hello;
    try {
      hello = await this.handler.hello();
    } catch (err) {
      return `Hello not built: ${(err as Error).message}`;
    }
    const identity = this.identity();
    if (this.credentials?.certPem !== identity.certPem) this.credentials = { certPem: identity.certPem, creds: syncCredentials(identity) };
    const creds = this.credentials.creds;
    const channel = syncChannel(identity, creds);
    this.pushback = undefined;
    this.ticketTimer ??= setInterval(() => {
      if (this.connected && this.credentials && this.credentials.creds.ticketAgeMs() > this.ticketRefreshMs)
        void this.credentials.creds.refreshTicket();
    }, 3600_000).unref();
    this.current = channel;
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
      for await (const m of gatewayClient(channel).sync(requests(), { signal: abort.signal, onTrailer })) {
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
        return `${Status[err.code]}: ${err.details}`;
      }
      return (err as Error).message;
    } finally {
      this.connected = false;
      abort.abort();
      this.wake?.();
      channel.close();
      this.current = null;
    }
  }
}
