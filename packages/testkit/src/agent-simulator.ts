import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { ChannelCredentials } from '@grpc/grpc-js';
import * as x509 from '@peculiar/x509';
import {
  type AgentMessage,
  type CertIssued,
  type Command,
  ControlPlaneDefinition,
  type Cutoff,
  type DesiredState,
  type DeviceDenials,
  LogSource,
  type ServerMessage,
  type StatusReport,
  type UsageEntry,
} from '@svc/proto';
import { type Channel, ClientError, createChannel, createClient, type Metadata, Status } from 'nice-grpc';

/**
 * A node agent, simulated: enrolls with a one-time token (its key is made here and never
 * sent), keeps a Sync stream, applies snapshots (or fails to, on request), answers commands,
 * sends status and usage, renews its certificate. Used by the integration tests and the
 * benchmarks; speaks only the wire contract, like a real agent.
 */
export interface SimulatorOptions {
  /** host:port of the gateway. */
  endpoint: string;
  caCertPem: string;
  hostname?: string;
  agentVersion?: string;
  xrayVersion?: string;
}

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIG = { name: 'ECDSA', hash: 'SHA-256' } as const;

export async function makeCsr(cn = 'agent'): Promise<{ csrPem: string; keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: `CN=${cn}`, keys, signingAlgorithm: SIG });
  const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { csrPem: csr.toString('pem'), keyPem };
}

export interface StreamEnd {
  code: Status | 'OK';
  details: string;
  /** The gateway's grpc-retry-pushback-ms trailer, when it sent one (its admission line was full). */
  retryPushbackMs?: string;
}

export class AgentSimulator {
  /** Revision of the last snapshot applied successfully. */
  appliedRevision = 0n;
  readonly desiredStates: DesiredState[] = [];
  readonly commands: Command[] = [];
  readonly acks: bigint[] = [];
  /** Every ServerClock.now_ms received (issue 36: one per stream, as it opens). */
  readonly clocks: bigint[] = [];
  /** Every CutoffAck.report_id received (issue 36). */
  readonly cutoffAcks: bigint[] = [];
  /** Every DeviceDenials received (issue 36), in order: the last is the set in force. */
  readonly deviceDenials: DeviceDenials[] = [];
  /** Lines the simulated agent and engine "have", served to get_logs and live tails. */
  readonly logLines: Array<{ source: LogSource; line: string }> = [];
  /** When set, the next snapshots fail to apply with this error text. */
  failApplyWith: string | null = null;
  restarts = 0;
  /** When true, commands are recorded but not answered (an agent that hangs). */
  ignoreCommands = false;
  /** How the current (or last) stream ended; null while open. */
  ended: StreamEnd | null = null;
  /** The Sync stream's TLS credentials (default: createSsl with this identity, a full handshake each time). */
  credentials: ChannelCredentials | null = null;

  private outbox: AgentMessage[] = [];
  private wake: (() => void) | null = null;
  private closing = false;
  private channel: Channel | null = null;
  private pump: Promise<void> | null = null;
  private readonly tails = new Map<string, NodeJS.Timeout>();
  private readonly waiters = new Set<() => void>();
  private certWaiter: ((issued: CertIssued) => void) | null = null;

  constructor(
    readonly opts: SimulatorOptions,
    readonly nodeId: string,
    public certPem: string,
    public keyPem: string,
  ) {}

  /** Enroll over TLS without a client certificate, pinning the CA from the enrollment token. */
  static async enroll(opts: SimulatorOptions & { token: string }): Promise<AgentSimulator> {
    const { csrPem, keyPem } = await makeCsr();
    const channel = createChannel(opts.endpoint, ChannelCredentials.createSsl(Buffer.from(opts.caCertPem)));
    try {
      const res = await createClient(ControlPlaneDefinition, channel).enroll({
        token: opts.token,
        csrPem,
        hostname: opts.hostname ?? 'sim-node',
        agentVersion: opts.agentVersion ?? 'sim-1.0.0',
      });
      return new AgentSimulator(opts, res.nodeId, res.clientCertPem, keyPem);
    } finally {
      channel.close();
    }
  }

  /** Opens the Sync stream and sends Hello (applied_revision defaults to what was applied). */
  connect(hello: { appliedRevision?: bigint; skipHello?: AgentMessage } = {}): void {
    if (this.pump) throw new Error('already connected');
    this.ended = null;
    this.closing = false;
    this.outbox = [
      hello.skipHello ?? {
        hello: {
          hostname: this.opts.hostname ?? 'sim-node',
          os: 'linux',
          arch: 'x64',
          agentVersion: this.opts.agentVersion ?? 'sim-1.0.0',
          xrayVersion: this.opts.xrayVersion ?? '25.10.15',
          appliedRevision: hello.appliedRevision ?? this.appliedRevision,
        },
      },
    ];
    this.channel = createChannel(
      this.opts.endpoint,
      this.credentials ??
        ChannelCredentials.createSsl(Buffer.from(this.opts.caCertPem), Buffer.from(this.keyPem), Buffer.from(this.certPem)),
      { 'grpc.max_receive_message_length': -1 },
    );
    const client = createClient(ControlPlaneDefinition, this.channel);
    const self = this;
    async function* requests(): AsyncGenerator<AgentMessage> {
      while (!self.closing) {
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
    let pushback: string | undefined;
    const onTrailer = (md: Metadata) => {
      pushback = md.get('grpc-retry-pushback-ms');
    };
    this.pump = (async () => {
      try {
        for await (const m of client.sync(requests(), { onTrailer })) this.receive(m);
        this.ended = { code: 'OK', details: '' };
      } catch (err) {
        this.ended =
          err instanceof ClientError
            ? { code: err.code, details: err.details, ...(pushback ? { retryPushbackMs: pushback } : {}) }
            : { code: Status.UNKNOWN, details: String(err) };
      } finally {
        this.closing = true;
        this.wake?.();
        for (const t of this.tails.values()) clearInterval(t);
        this.tails.clear();
        this.channel?.close();
        this.channel = null;
        this.pump = null;
        this.notify();
      }
    })();
  }

  send(message: AgentMessage): void {
    this.outbox.push(message);
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  sendStatus(s: Partial<StatusReport> = {}): void {
    this.send({
      status: {
        xrayRunning: true,
        cpuPercent: 12.5,
        memoryUsedBytes: 512n << 20n,
        memoryTotalBytes: 2048n << 20n,
        diskUsedBytes: 5n << 30n,
        diskTotalBytes: 20n << 30n,
        connections: 42,
        xrayUptimeSeconds: 3600n,
        enforcement: undefined,
        ...s,
      },
    });
  }

  /** Sends a DeviceReport: the whole picture of client addresses per user (subscription id). */
  sendDevices(users: Record<string, string[]>): void {
    this.send({ devices: { users: Object.entries(users).map(([subscriptionId, addresses]) => ({ subscriptionId, addresses })) } });
  }

  /** Sends a usage report and waits for its UsageAck. */
  async sendUsage(reportId: bigint, entries: UsageEntry[], timeoutMs = 10_000): Promise<void> {
    const before = this.acks.filter((a) => a === reportId).length;
    this.send({ usage: { reportId, entries } });
    await this.waitFor(() => this.acks.filter((a) => a === reportId).length > before, timeoutMs, `UsageAck ${reportId}`);
  }

  /** Sends a CutoffReport (issue 36: users the agent cut on its own) and waits for its CutoffAck. */
  async sendCutoffs(reportId: bigint, entries: Cutoff[], timeoutMs = 10_000): Promise<void> {
    const before = this.cutoffAcks.filter((a) => a === reportId).length;
    this.send({ cutoffs: { reportId, entries } });
    await this.waitFor(() => this.cutoffAcks.filter((a) => a === reportId).length > before, timeoutMs, `CutoffAck ${reportId}`);
  }

  /** CertRenewal with a new key; on CertIssued the identity is swapped (used from the next connect). */
  async renewCertificate(timeoutMs = 10_000): Promise<string> {
    const { csrPem, keyPem } = await makeCsr();
    const issued = await this.requestCertificate(csrPem, timeoutMs);
    if (issued.error) throw new Error(`renewal refused: ${issued.error}`);
    const pem = issued.clientCertPem;
    this.certPem = pem;
    this.keyPem = keyPem;
    return pem;
  }

  /** Sends CertRenewal with `csrPem` as given and resolves with the CertIssued answering it (the identity is not swapped). */
  requestCertificate(csrPem: string, timeoutMs = 10_000): Promise<CertIssued> {
    const issued = new Promise<CertIssued>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no CertIssued')), timeoutMs);
      this.certWaiter = (m) => {
        clearTimeout(t);
        resolve(m);
      };
    });
    this.send({ certRenewal: { csrPem } });
    return issued;
  }

  /** Resolves when `predicate` holds (checked on every message and stream end). */
  waitFor(predicate: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`simulator ${this.nodeId}: ${what} not reached within ${timeoutMs} ms (ended: ${JSON.stringify(this.ended)})`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  waitForEnd(timeoutMs = 10_000): Promise<StreamEnd> {
    return this.waitFor(() => this.ended !== null, timeoutMs, 'stream end').then(() => this.ended as StreamEnd);
  }

  waitForRevision(revision: bigint, timeoutMs = 10_000): Promise<void> {
    return this.waitFor(() => this.desiredStates.some((d) => d.revision >= revision), timeoutMs, `DesiredState >= ${revision}`);
  }

  /** Half-closes the stream from the agent's side and waits for it to end. */
  async disconnect(): Promise<void> {
    if (!this.pump) return;
    this.closing = true;
    const w = this.wake;
    this.wake = null;
    w?.();
    const pump = this.pump;
    // The server ends its side once the agent's side is closed; cut the channel if it does not.
    const timer = setTimeout(() => this.channel?.close(), 2000);
    await pump;
    clearTimeout(timer);
  }

  private receive(m: ServerMessage): void {
    if (m.desiredState) {
      this.desiredStates.push(m.desiredState);
      const revision = m.desiredState.revision;
      if (this.failApplyWith) this.send({ applyResult: { revision, success: false, error: this.failApplyWith } });
      else {
        this.appliedRevision = revision;
        this.send({ applyResult: { revision, success: true, error: '' } });
      }
    } else if (m.usageAck) {
      this.acks.push(m.usageAck.reportId);
    } else if (m.clock) {
      this.clocks.push(m.clock.nowMs);
    } else if (m.cutoffAck) {
      this.cutoffAcks.push(m.cutoffAck.reportId);
    } else if (m.deviceDenials) {
      this.deviceDenials.push(m.deviceDenials);
    } else if (m.certIssued) {
      this.certWaiter?.(m.certIssued);
      this.certWaiter = null;
    } else if (m.command) {
      this.command(m.command);
    }
    this.notify();
  }

  private command(c: Command): void {
    this.commands.push(c);
    if (this.ignoreCommands) return;
    if (c.restartXray) this.restarts++;
    else if (c.getLogs) {
      const source = c.getLogs.source;
      const lines = this.logLines.filter((l) => l.source === source).slice(-Math.max(0, c.getLogs.limit));
      // Several batches, the last with eof, as a real agent pages a long log.
      const BATCH = 50;
      for (let i = 0; i < lines.length || i === 0; i += BATCH) {
        const part = lines.slice(i, i + BATCH);
        this.send({
          logs: {
            commandId: c.commandId,
            entries: part.map((l, k) => ({ timestampMs: BigInt(Date.now() + i + k), source: l.source, line: l.line })),
            eof: i + BATCH >= lines.length,
          },
        });
      }
    } else if (c.startLogStream) {
      const source = c.startLogStream.source;
      clearInterval(this.tails.get(c.commandId));
      let n = 0;
      this.tails.set(
        c.commandId,
        setInterval(() => {
          n++;
          this.send({
            logs: {
              commandId: c.commandId,
              entries: [
                { timestampMs: BigInt(Date.now()), source, line: `${source === LogSource.AGENT ? 'agent' : 'xray'} live line ${n}` },
              ],
              eof: false,
            },
          });
        }, 50),
      );
    } else if (c.stopLogStream) {
      clearInterval(this.tails.get(c.commandId));
      this.tails.delete(c.commandId);
    }
  }

  /** Live tails the simulated agent is running now (by command id). */
  get activeTails(): string[] {
    return [...this.tails.keys()];
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }
}
