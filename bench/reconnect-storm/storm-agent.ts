// A simulated agent that behaves like apps/agent's SyncSession when its stream breaks: the same
// TLS credentials (ResumableChannelCredentials: the last session offered, the ticket kept), the
// same reconnect backoff (1-60 s, jitter, reset after a stream that lived 10 s) and the same
// reading of the gateway's retry hint (grpc-retry-pushback-ms). On every stream: Hello with the
// revision it applied (so an agent that is up to date is sent nothing), a StatusReport at once
// (as the agent does on `opened`) and every 30 s; a DesiredState is applied at once. Lean (one
// grpc-js client per node, no nice-grpc iterables) so 4 processes hold 10,000.
import * as grpc from '@grpc/grpc-js';
import { Backoff, channelReconnectOptions, pushbackDelay, ResumableChannelCredentials } from '@svc/agent';
import { AgentMessage, ServerMessage } from '@svc/proto';

const SYNC = '/svc.controlplane.v1.ControlPlane/Sync';
const serialize = (m: AgentMessage) => Buffer.from(AgentMessage.encode(m).finish());
const deserialize = (b: Buffer) => ServerMessage.decode(b);
const HEALTHY_MS = 10_000;

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // One connection per agent, as on a real fleet.
  'grpc.use_local_subchannel_pool': 1,
  'grpc.enable_retries': 0,
  'grpc.max_receive_message_length': -1,
  // The gateway's certificate names localhost and 127.0.0.1; agents dial 127.0.0.1.
  'grpc.ssl_target_name_override': 'localhost',
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 20_000,
  // As apps/agent (gateway-channel.ts): no channelz.
  'grpc.enable_channelz': 0,
};

/** What every agent of a process did; the bench reads and resets it per phase. */
export const counters = {
  attempts: 0,
  ended: 0,
  pushbacks: 0,
  refusedOther: 0,
  endSample: [] as string[],
  /** How streams and attempts ended: "<status>: <details>" -> count. */
  endings: {} as Record<string, number>,
};

export class StormAgent {
  applied = 0n;
  /** Offer the last TLS session (false: full handshakes only, the baseline). */
  resume = true;
  readonly creds: ResumableChannelCredentials;
  private readonly backoff = new Backoff();
  private client: grpc.Client | null = null;
  private call: grpc.ClientDuplexStream<AgentMessage, ServerMessage> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private statusTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private openedAt = 0;
  /** Resolves on the first DesiredState applied (the initial open of the bench). */
  onApplied: (() => void) | null = null;

  constructor(
    readonly endpoint: string,
    readonly nodeId: string,
    identity: { caCertPem: Buffer; keyPem: Buffer; certPem: Buffer },
  ) {
    this.creds = new ResumableChannelCredentials({ ...identity, resume: true });
  }

  get open(): boolean {
    return this.call !== null;
  }

  connect(): void {
    if (this.stopped) return;
    counters.attempts++;
    this.creds.resume = this.resume;
    // One channel for the agent's life, as apps/agent keeps (sync-session.ts: a channel closed
    // while backing off still connects later, and keeps that connection).
    // apps/agent's reconnect schedule: its own first delay per agent (channelReconnectOptions).
    this.client ??= new grpc.Client(this.endpoint, this.creds, { ...CHANNEL_OPTIONS, ...channelReconnectOptions() });
    const client = this.client;
    // Wait for the channel to connect, as apps/agent does (gateway-channel.ts `connected`).
    client.waitForReady(Date.now() + 30_000, (err) => {
      if (this.stopped) return;
      if (err) this.ended(grpc.status.UNAVAILABLE, 'not connected within 30 s', undefined);
      else this.stream(client);
    });
  }

  private stream(client: grpc.Client): void {
    const call = client.makeBidiStreamRequest(SYNC, serialize, deserialize);
    this.call = call;
    this.openedAt = Date.now();
    let pushback: string | undefined;
    let done = false;
    const end = (code: number, details: string) => {
      if (done) return;
      done = true;
      this.ended(code, details, pushback);
    };
    call.on('data', (m: ServerMessage) => {
      if (!m.desiredState) return;
      this.applied = m.desiredState.revision;
      call.write({ applyResult: { revision: this.applied, success: true, error: '' } });
      const cb = this.onApplied;
      this.onApplied = null;
      cb?.();
    });
    call.on('status', (s: grpc.StatusObject) => {
      pushback = s.metadata.get('grpc-retry-pushback-ms')[0]?.toString();
      end(s.code, s.details);
    });
    call.on('error', (err: grpc.ServiceError) => end(err.code, err.details));
    call.write({
      hello: {
        hostname: this.nodeId,
        os: 'linux',
        arch: 'x64',
        agentVersion: 'bench-1.0.0',
        xrayVersion: '25.10.15',
        appliedRevision: this.applied,
      },
    });
    this.sendStatus();
    this.statusTimer = setInterval(() => this.sendStatus(), 30_000 * (0.9 + 0.2 * Math.random()));
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.close();
    this.client?.close();
    this.client = null;
  }

  private close(): void {
    if (this.statusTimer) clearInterval(this.statusTimer);
    this.statusTimer = null;
    this.call?.cancel();
    this.call = null;
  }

  private ended(code: number, details: string, pushback: string | undefined): void {
    this.close();
    if (this.stopped) return;
    counters.ended++;
    const why = `${grpc.status[code] ?? code}: ${details.replace(/\d+/g, '#').slice(0, 80)}`;
    counters.endings[why] = (counters.endings[why] ?? 0) + 1;
    if (pushback !== undefined) counters.pushbacks++;
    else if (code !== grpc.status.UNAVAILABLE && code !== grpc.status.CANCELLED) {
      counters.refusedOther++;
      if (counters.endSample.length < 5) counters.endSample.push(`${this.nodeId}: ${grpc.status[code] ?? code} ${details}`);
    }
    if (Date.now() - this.openedAt >= HEALTHY_MS) this.backoff.reset();
    const delay = pushbackDelay(pushback) ?? this.backoff.next();
    this.timer = setTimeout(() => this.connect(), delay);
  }

  private sendStatus(): void {
    this.call?.write({
      status: {
        xrayRunning: true,
        cpuPercent: Math.round(Math.random() * 10_000) / 100,
        memoryUsedBytes: 512n << 20n,
        memoryTotalBytes: 2048n << 20n,
        diskUsedBytes: 5n << 30n,
        diskTotalBytes: 20n << 30n,
        connections: 42,
        xrayUptimeSeconds: 3600n,
        enforcement: undefined,
      },
    });
  }
}
