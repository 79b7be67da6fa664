// A lean simulated agent for the benchmarks: one grpc-js client (its own channel, so its own
// TCP + TLS connection, like a real node) holding one Sync stream, speaking only the wire
// contract (svc.controlplane.v1, messages from @svc/proto). Lighter than the testkit's
// AgentSimulator (no nice-grpc async iterables, no recorded history), so a few processes
// can hold 10,000 of them.
import * as grpc from '@grpc/grpc-js';
import { AgentMessage, type Command, type DesiredState, type ServerMessage, ServerMessageDecoder, type UsageEntry } from '@svc/proto';

const SYNC = '/svc.controlplane.v1.ControlPlane/Sync';
const serialize = (m: AgentMessage) => Buffer.from(AgentMessage.encode(m).finish());
/** Size (after grpc-js has inflated it, if it was compressed) and decode time of the last message any agent of this process received. */
export const lastReceived = { bytes: 0, decodeMs: 0 };
/** As the agent's client decodes them (@svc/proto controlPlaneAgentDefinition with its ServerMessageDecoder): one decoder per agent. */
const deserializer = (decoder: ServerMessageDecoder) => (b: Buffer) => {
  const t = performance.now();
  const m = decoder.decode(b);
  lastReceived.decodeMs = performance.now() - t;
  lastReceived.bytes = b.length;
  return m;
};

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // One connection per agent, as on a real fleet (never share a subchannel between nodes).
  'grpc.use_local_subchannel_pool': 1,
  // A stream is not retried by the library: what the bench sees is what the gateway did.
  'grpc.enable_retries': 0,
  'grpc.max_receive_message_length': -1,
  // Agents dial an address; the gateway's certificate names localhost and 127.0.0.1.
  'grpc.ssl_target_name_override': 'localhost',
};

export interface Identity {
  caCertPem: Buffer;
  keyPem: Buffer;
  certPem: Buffer;
}

export class BenchAgent {
  private client: grpc.Client | null = null;
  private call: grpc.ClientDuplexStream<AgentMessage, ServerMessage> | null = null;
  private readonly ackWaiters = new Map<bigint, () => void>();
  private readonly decoder = new ServerMessageDecoder();
  /** How the stream ended (null while open). */
  ended: { code: number; details: string } | null = null;
  onEnd: ((end: { code: number; details: string }) => void) | null = null;
  /** Each DesiredState as it arrives, decoded, before its ApplyResult is written (the desired-state benchmarks time these). */
  onDesiredState: ((d: DesiredState) => void) | null = null;
  /** Each Command as it arrives (not answered: the benchmarks only time its arrival). */
  onCommand: ((c: Command) => void) | null = null;

  constructor(
    readonly endpoint: string,
    readonly nodeId: string,
    private readonly identity: Identity,
  ) {}

  /** Opens the stream and sends Hello; resolves once admitted (the gateway pushes the desired revision, applied at once). */
  open(timeoutMs = 120_000): Promise<void> {
    const { caCertPem, keyPem, certPem } = this.identity;
    this.client = new grpc.Client(this.endpoint, grpc.credentials.createSsl(caCertPem, keyPem, certPem), CHANNEL_OPTIONS);
    const call = this.client.makeBidiStreamRequest(SYNC, serialize, deserializer(this.decoder));
    this.call = call;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => fail({ code: grpc.status.DEADLINE_EXCEEDED, details: `not admitted within ${timeoutMs} ms` }),
        timeoutMs,
      );
      let admitted = false;
      let failed = false;
      const fail = (end: { code: number; details: string }) => {
        if (failed) return;
        failed = true;
        clearTimeout(timer);
        if (!this.ended) this.ended = end;
        this.close();
        if (admitted) this.onEnd?.(end);
        else reject(new Error(`${this.nodeId}: ${grpc.status[end.code] ?? end.code} ${end.details}`));
      };
      call.on('data', (m: ServerMessage) => {
        if (m.desiredState) {
          this.onDesiredState?.(m.desiredState);
          call.write({ applyResult: { revision: m.desiredState.revision, success: true, error: '' } });
          if (!admitted) {
            admitted = true;
            clearTimeout(timer);
            resolve();
          }
        } else if (m.usageAck) {
          const w = this.ackWaiters.get(m.usageAck.reportId);
          this.ackWaiters.delete(m.usageAck.reportId);
          w?.();
        } else if (m.command) {
          this.onCommand?.(m.command);
        }
      });
      call.on('error', (err: grpc.ServiceError) => fail({ code: err.code, details: err.details }));
      call.on('status', (s: grpc.StatusObject) => {
        if (s.code === grpc.status.OK) fail({ code: s.code, details: 'ended by the gateway' });
      });
      call.write({
        hello: {
          hostname: this.nodeId,
          os: 'linux',
          arch: 'x64',
          agentVersion: 'bench-1.0.0',
          xrayVersion: '25.10.15',
          // Nothing applied yet: the gateway answers with the node's DesiredState.
          appliedRevision: 0n,
        },
      });
    });
  }

  sendStatus(): void {
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

  /** Sends a UsageReport and resolves on its UsageAck. */
  sendUsage(reportId: bigint, entries: UsageEntry[], timeoutMs = 60_000): Promise<void> {
    const call = this.call;
    if (!call || this.ended) return Promise.reject(new Error(`${this.nodeId}: stream not open`));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ackWaiters.delete(reportId);
        reject(new Error(`${this.nodeId}: no UsageAck ${reportId} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.ackWaiters.set(reportId, () => {
        clearTimeout(timer);
        resolve();
      });
      call.write({ usage: { reportId, entries } });
    });
  }

  close(): void {
    this.call?.cancel();
    this.call = null;
    this.client?.close();
    this.client = null;
  }
}
