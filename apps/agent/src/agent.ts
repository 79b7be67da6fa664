import { mkdir } from 'node:fs/promises';
import { arch, hostname, platform } from 'node:os';
import { join } from 'node:path';
import { createEngineApi, type EngineApi } from '@svc/engine-api';
import { type AgentMessage, type Command, EnforcementStatus, type Hello, type ServerMessage } from '@svc/proto';
import { type Level, type Logger, multistream, pino } from 'pino';
import { loadApplied } from './apply/applied-state.ts';
import { Applier } from './apply/applier.ts';
import { CertificateRenewal } from './certificate-renewal.ts';
import { ConnectionBook } from './connections/access-log.ts';
import { LiveConnections } from './connections/live-connections.ts';
import { destroySockets } from './connections/socket-killer.ts';
import { DeviceEnforcer } from './devices/device-enforcer.ts';
import { engineVersion, freeLoopbackPort } from './engine/engine-cli.ts';
import { EngineProcess } from './engine/engine-process.ts';
import type { EngineSettings } from './engine/engine-settings.ts';
import { EngineSupervisor } from './engine/engine-supervisor.ts';
import { loadEngineWithheld } from './entitlements/engine-view.ts';
import { EntitlementEnforcer } from './entitlements/entitlement-enforcer.ts';
import type { ClockSources } from './entitlements/server-clock.ts';
import { type Identity, loadIdentity } from './identity.ts';
import { LogCommands } from './log-commands.ts';
import { LogRings } from './log-rings.ts';
import { SpeedCaps } from './shaping/speed-caps.ts';
import { ensurePrivateDir } from './state-files.ts';
import { StatusSampler } from './status.ts';
import { SyncSession } from './sync-session.ts';
import type { UpgradeOnStart } from './upgrade/pending-upgrade.ts';
import { Upgrader } from './upgrade/upgrader.ts';
import { UsageJournal } from './usage/index.ts';
import { UsageSender } from './usage/usage-sender.ts';
import { AGENT_VERSION } from './version.ts';

/**
 * `svc-agent run`: the node agent's runtime. Wires the Sync session to the engine:
 * - desired states are applied one at a time, newest first (a snapshot that arrives while one
 *   is being applied replaces any waiting one), each answered with its ApplyResult;
 * - the engine is supervised: adopted if a previous agent left it running, restarted with a
 *   backoff if it exits on its own;
 * - usage: the engine's counters are read into the journal every `usageEveryMs` and before
 *   anything that could lose them, and every unacknowledged report is sent (again) on every
 *   stream, in order, and again while it stays unacknowledged;
 * - StatusReport every 30 s and when the engine starts or stops; certificate renewal at two
 *   thirds of the certificate's lifetime; commands (restart, logs).
 */
export interface AgentOptions {
  stateDir: string;
  engine: EngineSettings;
  /** Defaults: 30 s (spec 8), 10 s. */
  statusEveryMs?: number;
  usageEveryMs?: number;
  /** Unacknowledged reports are sent again after this long (default 60 s). */
  resendAfterMs?: number;
  logLevel?: string;
  /** The clock the certificate renewal reads (tests move it past two thirds of the lifetime). */
  now?: () => number;
  /** install.sh's release directory (SVC_AGENT_RELEASE_DIR): upgrades from the panel need it. */
  releaseDir?: string | null;
  /** What a pending upgrade means for this start (upgrade/pending-upgrade.ts). */
  upgradeOnStart?: UpgradeOnStart;
  /** Called after the agent handed the engine over for an upgrade: exit, for the supervisor to start current.mjs. */
  onRestart?: (code: number, why: string) => void;
  /** How long a device beyond a user's device limit is tolerated (default 20 s; devices/device-tracker.ts). */
  deviceGraceMs?: number;
  /** How often live connections are read for device limits (default 2 s; devices/device-enforcer.ts). */
  devicesEveryMs?: number;
  /** How often the entitlements (time, traffic slice) are looked at (default 1 s; entitlements/entitlement-enforcer.ts). */
  entitlementEveryMs?: number;
  /** Devices shaped for speed caps (SVC_AGENT_SHAPE_DEVICES; default the default routes' devices; ['off'] turns caps off). */
  shapeDevices?: string[];
  /** How often speed caps follow the live connections (default 2 s; shaping/speed-caps.ts). */
  speedCapsEveryMs?: number;
  /** The clocks the entitlements read (tests move the wall clock). */
  entitlementClock?: ClockSources;
}

export class Agent {
  readonly rings = new LogRings();
  readonly log: Logger;
  private identity!: Identity;
  private engine!: EngineProcess;
  private api!: EngineApi;
  private apiPort = 0;
  private journal!: UsageJournal;
  private applier!: Applier;
  private session!: SyncSession;
  private logs!: LogCommands;
  private upgrader!: Upgrader;
  private status!: StatusSampler;
  private readonly book = new ConnectionBook();
  /** Who is connected now (the socket table joined with the access log): device limits, speed caps. */
  readonly live = new LiveConnections({ ports: () => this.applier?.inboundPorts() ?? [] });
  private devices!: DeviceEnforcer;
  private speedCaps!: SpeedCaps;
  private supervisor!: EngineSupervisor;
  private readonly timers: NodeJS.Timeout[] = [];
  private xrayVersion = '';
  private usage!: UsageSender;
  private entitlements!: EntitlementEnforcer;
  private renewal!: CertificateRenewal;
  private stopping = false;
  private running: Promise<void> | null = null;

  constructor(readonly opts: AgentOptions) {
    // Each destination of a multistream has its own level (default info): both get the agent's.
    const level = (opts.logLevel ?? 'info') as Level;
    this.log = pino(
      { level, base: { svc: 'agent' } },
      multistream([
        { level, stream: process.stdout },
        { level, stream: this.rings.agentSink() },
      ]),
    );
  }

  async start(): Promise<void> {
    const { stateDir } = this.opts;
    const identity = await loadIdentity(stateDir);
    if (!identity)
      throw new Error(`${stateDir} holds no identity: run \`svc-agent enroll --server HOST:PORT --token T --ca-sha256 H\` first`);
    this.identity = identity;
    await ensurePrivateDir(stateDir);
    await mkdir(join(stateDir, 'engine'), { recursive: true, mode: 0o700 });
    this.engine = new EngineProcess(this.opts.engine, join(stateDir, 'engine'), this.rings.engine, this.log, (line) =>
      this.live.seen(this.book.see(line)),
    );
    await this.engine.follow();
    const adopted = await this.engine.adopt();
    this.apiPort = adopted?.apiPort ?? (await freeLoopbackPort());
    this.api = createEngineApi({
      address: `127.0.0.1:${this.apiPort}`,
      flavour: this.opts.engine.flavour,
      packagePrefix: this.opts.engine.apiPrefix,
    });
    this.journal = await UsageJournal.open(join(stateDir, 'usage'));
    this.xrayVersion = await engineVersion(this.opts.engine);
    // The session is made once the engine runs; until then nothing is sent.
    const send = (m: AgentMessage) => this.session?.send(m) ?? false;
    const connected = () => this.session?.connected ?? false;
    this.usage = new UsageSender({
      engine: this.engine,
      api: this.api,
      journal: this.journal,
      send,
      connected,
      log: this.log,
      resendAfterMs: this.opts.resendAfterMs ?? 60_000,
      collected: (records) => this.entitlements.folded(records),
    });
    this.entitlements = await EntitlementEnforcer.open({
      stateDir,
      clock: this.opts.entitlementClock,
      peek: () => this.usage.peek(),
      collect: () => this.collect(),
      reapply: () => this.supervisor.run(async () => void (await this.applier.reapply())),
      send,
      connected,
      log: this.log,
      resendAfterMs: this.opts.resendAfterMs ?? 60_000,
    });
    // Records a crash left in the journal before the book counted them; the limits of what runs.
    await this.entitlements.folded(this.journal.pending());
    const applied = await loadApplied(stateDir);
    if (applied?.config) await this.entitlements.withhold(applied.config);
    this.applier = new Applier(
      {
        stateDir,
        engine: this.engine,
        users: this.api,
        apiPort: () => this.apiPort,
        log: this.log,
        collect: () => this.collect(),
        cut: (emails) => this.cut(emails),
        withhold: (config) => this.entitlements.withhold(config),
      },
      applied,
      await loadEngineWithheld(stateDir),
    );
    this.status = new StatusSampler(stateDir);
    this.devices = new DeviceEnforcer({
      live: this.live,
      ports: () => this.applier.inboundPorts(),
      send,
      log: this.log,
      graceMs: this.opts.deviceGraceMs,
      everyMs: this.opts.devicesEveryMs,
      // Xray's own count of each user's online addresses where it has one (v2ray 4 has none).
      ...(this.opts.engine.flavour === 'xray' ? { engineAddresses: () => this.api.onlineAddresses() } : {}),
    });
    this.devices.setLimits(applied?.config?.userLimits ?? []);
    await this.devices.start();
    this.speedCaps = new SpeedCaps({
      live: this.live,
      log: this.log,
      devices: this.opts.shapeDevices,
      everyMs: this.opts.speedCapsEveryMs,
    });
    this.speedCaps.setLimits(applied?.config?.userLimits ?? []);
    await this.speedCaps.start();
    this.supervisor = new EngineSupervisor({
      engine: this.engine,
      applier: () => this.applier,
      send,
      log: this.log,
      statusChanged: () => void this.sendStatus(),
    });
    this.engine.on('exit', () => this.supervisor.exited());
    if (!adopted)
      await this.supervisor.run(() => this.applier.startEngine()).catch((err) => this.log.error({ err }, 'the engine does not start'));
    // The engine (adopted, or started) in line with the users cut now; the entitlements learn the limits.
    await this.supervisor.run(() => this.applier.reapply()).catch((err) => this.log.warn({ err }, 'cut users not brought in line'));
    this.session = new SyncSession(() => this.identity, this.handler(), this.log);
    this.renewal = new CertificateRenewal({
      stateDir,
      identity: () => this.identity,
      renewed: (next) => {
        this.identity = next;
      },
      send,
      connected,
      log: this.log,
      now: this.opts.now ?? Date.now,
    });
    this.logs = new LogCommands(this.rings, send, this.log);
    this.upgrader = new Upgrader(
      {
        stateDir,
        releaseDir: this.opts.releaseDir ?? null,
        version: AGENT_VERSION,
        log: this.log,
        send,
        connected,
        restart: (code, why) => {
          void this.handOver().then(
            () => this.opts.onRestart?.(code, why),
            (err: unknown) => {
              this.log.error({ err }, 'hand-over failed');
              this.opts.onRestart?.(code, why);
            },
          );
        },
      },
      this.opts.upgradeOnStart ?? { kind: 'none' },
    );
    this.every(this.opts.statusEveryMs ?? 30_000, () => this.sendStatus());
    this.every(this.opts.usageEveryMs ?? 10_000, () => void this.collect().catch((err) => this.log.warn({ err }, 'usage not collected')));
    this.every(Math.min(this.opts.resendAfterMs ?? 60_000, 30_000), () => {
      this.usage.resendStale();
      this.entitlements.resendStale();
    });
    this.every(
      this.opts.entitlementEveryMs ?? 1000,
      () => void this.entitlements.pass().catch((err) => this.log.warn({ err }, 'entitlements not checked')),
    );
    this.every(3600_000, () => this.renewal.maybeRenew());
    this.log.info(
      {
        node: this.identity.nodeId,
        server: this.identity.server,
        applied_revision: String(this.applier.appliedRevision),
        engine: this.opts.engine.bin,
        api_port: this.apiPort,
      },
      'agent started',
    );
    this.running = this.session.run();
  }

  /** Stops the session and the engine (counters collected first). */
  async stop(): Promise<void> {
    await this.halt(true);
    this.log.info('agent stopped');
  }

  /**
   * Stops the agent and leaves the engine serving for the next agent to adopt (an upgrade:
   * SIGUSR2 from install.sh run again, or Command.upgrade_agent): counters collected into the
   * journal first, so the next agent starts from them and nothing is counted twice or lost.
   */
  async handOver(): Promise<void> {
    await this.halt(false);
    this.log.info('agent stopped; the engine keeps serving for the next agent');
  }

  private async halt(stopEngine: boolean): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.supervisor?.halt();
    for (const t of this.timers) clearInterval(t);
    this.devices?.stop();
    await this.speedCaps?.stop().catch((err) => this.log.warn({ err }, 'speed caps not removed'));
    this.logs?.stopAll();
    this.upgrader?.stop();
    await this.collect().catch(() => {});
    this.session?.stop();
    await this.running;
    // After the engine operation in progress: the engine stopped, or left serving for the next agent.
    await this.supervisor.run(async () => {
      if (stopEngine) await this.engine.stop();
    });
    this.engine.detach();
    this.api.close();
    await this.journal.close();
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    t.unref();
    this.timers.push(t);
  }

  private handler() {
    return {
      hello: async (): Promise<Hello> => ({
        hostname: hostname(),
        os: platform(),
        arch: arch(),
        agentVersion: AGENT_VERSION,
        xrayVersion: this.xrayVersion,
        appliedRevision: this.applier.appliedRevision,
      }),
      opened: () => {
        this.upgrader.opened();
        this.usage.opened();
        this.devices.opened();
        this.entitlements.opened();
        void this.sendStatus();
        void this.renewal.maybeRenew();
      },
      message: (m: ServerMessage) => this.onMessage(m),
      closed: () => {
        this.upgrader.closed();
        this.logs.stopAll();
        this.renewal.forget();
      },
    };
  }

  private onMessage(m: ServerMessage): void {
    if (m.desiredState) {
      this.devices.setLimits(m.desiredState.config?.userLimits ?? []);
      this.speedCaps.setLimits(m.desiredState.config?.userLimits ?? []);
    }
    if (m.deviceDenials) this.devices.setDenials(m.deviceDenials.users);
    if (m.desiredState) this.supervisor.apply(m.desiredState);
    else if (m.usageAck) this.usage.acknowledged(m.usageAck.reportId);
    else if (m.command) this.onCommand(m.command);
    else if (m.certIssued) void this.renewal.issued(m.certIssued.clientCertPem, m.certIssued.error);
    else if (m.clock) void this.entitlements.heard(m.clock.nowMs).catch((err) => this.log.warn({ err }, 'server clock not kept'));
    else if (m.cutoffAck) this.entitlements.acknowledged(m.cutoffAck.reportId);
  }

  // ---- usage ----------------------------------------------------------------------------

  /** Reads the engine's counters into the journal and sends the new reports (usage/usage-sender.ts). */
  collect(): Promise<void> {
    return this.usage?.collect() ?? Promise.resolve();
  }

  // ---- connections of removed users -------------------------------------------------------

  private async cut(emails: string[]): Promise<void> {
    const sources = emails.flatMap((e) => this.book.take(e));
    if (sources.length === 0) return;
    const left = await destroySockets(sources);
    if (left === 0) {
      this.log.info({ users: emails.length, connections: sources.length }, 'connections of removed users ended');
      return;
    }
    this.log.warn({ left }, 'connections of removed users could not be destroyed (no CAP_NET_ADMIN?); restarting the engine to end them');
    await this.applier.restartEngine();
  }

  // ---- status, commands, certificate ------------------------------------------------------

  private async sendStatus(): Promise<void> {
    if (!this.session?.connected) return;
    const ports = new Set(this.applier.inboundPorts());
    const report = await this.status.sample({ running: this.engine.running, uptimeSeconds: this.engine.uptimeSeconds(), ports });
    // Time and traffic slices are enforced by every agent of this release (entitlements/);
    // device limits and speed caps as far as this node allows (their errors say why not).
    report.enforcement = {
      ...EnforcementStatus.fromPartial({ entitlements: true }),
      ...this.devices.enforcement(),
      ...this.speedCaps.enforcement(),
    };
    this.session.send({ status: report });
  }

  private onCommand(c: Command): void {
    if (c.restartXray) {
      this.supervisor.restartOnCommand(c.commandId);
    } else if (c.getLogs) this.logs.getLogs(c);
    else if (c.startLogStream) this.logs.startTail(c);
    else if (c.stopLogStream) this.logs.stopTail(c.commandId);
    else if (c.upgradeAgent)
      void this.upgrader.handle(c.commandId, c.upgradeAgent).catch((err) => this.log.error({ err }, 'upgrade_agent failed'));
  }
}
