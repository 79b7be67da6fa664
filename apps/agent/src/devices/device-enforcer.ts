import {
  type AgentMessage,
  deviceAddress,
  type EnforcementStatus,
  subscriptionIdOf,
  type UserDevices,
  type UserLimits,
  userEmail,
} from '@svc/proto';
import type { Logger } from 'pino';
import type { LiveConnection, LiveConnections, LiveSnapshot } from '../connections/live-connections.ts';
import { destroyExact, type Socket, socketControlMissing } from '../connections/socket-table.ts';
import { DeviceTracker, type DeviceTrackerOptions } from './device-tracker.ts';

/**
 * Device limits on this node's live connections (device-tracker.ts has the rule):
 * - every `everyMs` (default 2 s) one pass: the socket table joined with the access log
 *   (LiveConnections), each user's devices through the tracker, and the connections of refused
 *   or denied devices ended by their exact tuple (client address and port, engine port), so the
 *   same user's other devices and other users behind the same address keep theirs;
 * - kill on sight: a new connection of a user from a refused or denied device is ended as soon
 *   as the engine's access log shows it (the engine has accepted it and read the request; the
 *   client sees its connection reset before any answer): "refused" on the wire;
 * - DeviceReport (the whole picture: each user's devices with live connections, refused ones
 *   left out) when it changed, at most every `reportEveryMs` (default 5 s), and on every new
 *   stream;
 * - the engine's own count where it has one (Xray v26.4.13 on: GetUsersStats, the client
 *   addresses of each user's live connections, any transport): a device the engine lists and
 *   the socket table does not (a UDP transport: QUIC, mKCP; a connection too new for it) counts
 *   as active now; the socket table still says how recently the others' clients sent
 *   something, and gives the tuples to end. device_source says which: `engine-online-ips` or
 *   `access-log` (v2ray 4, older Xray);
 * - EnforcementStatus: device_limits false with the reason when sockets cannot be ended here
 *   (no ss, no CAP_NET_ADMIN).
 */
export interface DeviceEnforcerOptions extends DeviceTrackerOptions {
  live: LiveConnections;
  /** The engine's inbound ports now (kill on sight matches on them). */
  ports: () => Iterable<number>;
  send: (m: AgentMessage) => boolean;
  log: Logger;
  everyMs?: number;
  reportEveryMs?: number;
  /** Ends sockets (default: ss -K); resolves with how many ended. */
  destroy?: (sockets: Socket[], ports: Iterable<number>) => Promise<number>;
  /**
   * Every online user's client addresses as the engine counts them (email -> address -> Unix
   * ms), null when the engine has no such statistics (EngineApi.onlineAddresses). Absent: the
   * access log only.
   */
  engineAddresses?: () => Promise<Map<string, Map<string, number>> | null>;
  /** Why sockets cannot be ended (default: ss and CAP_NET_ADMIN checked); null when they can. */
  missing?: () => Promise<string | null>;
  now?: () => number;
}

export const DEVICE_SOURCE_ACCESS_LOG = 'access-log';
export const DEVICE_SOURCE_ENGINE = 'engine-online-ips';
/** An engine without online-address statistics is asked again after this long (it may have been upgraded). */
const ENGINE_RECHECK_MS = 600_000;

export class DeviceEnforcer {
  readonly tracker: DeviceTracker;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private error: string | null = null;
  private checked = false;
  private lastReport = '';
  private sentReport = '';
  private sentAt = 0;
  private reportTimer: NodeJS.Timeout | null = null;
  private pending: Socket[] = [];
  private flushing: NodeJS.Immediate | null = null;
  /** Devices logged as refused (so each refusal is logged once). */
  private logged = new Set<string>();
  /** Connections ended so far (tests, logs). */
  ended = 0;
  /** Whether the engine's last answer had online addresses; when it said it has none. */
  private engineCounts = false;
  private engineLacksSince: number | null = null;

  constructor(private readonly o: DeviceEnforcerOptions) {
    this.tracker = new DeviceTracker(o);
    this.now = o.now ?? Date.now;
    o.live.onAccess((c) => this.sighted(c));
  }

  /** Checks what this node can do, then runs a pass every `everyMs`. */
  async start(): Promise<void> {
    this.error = await (this.o.missing ?? socketControlMissing)();
    this.checked = true;
    if (this.error) this.o.log.warn({ reason: this.error }, 'device limits cannot be enforced on this node');
    this.timer = setInterval(() => void this.pass(), this.o.everyMs ?? 2000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.reportTimer) clearTimeout(this.reportTimer);
    if (this.flushing) clearImmediate(this.flushing);
    this.timer = null;
  }

  /** NodeConfig.user_limits of the desired state. */
  setLimits(limits: UserLimits[]): void {
    this.tracker.setLimits(limits);
  }

  /** ServerMessage.device_denials. */
  setDenials(users: UserDevices[]): void {
    this.tracker.setDenials(users, this.now());
    // Denied devices end at once, not at the next pass.
    void this.pass();
  }

  enforcement(): Pick<EnforcementStatus, 'deviceLimits' | 'deviceLimitsError' | 'deviceSource'> {
    if (!this.checked) return { deviceLimits: false, deviceLimitsError: 'not checked yet', deviceSource: '' };
    return {
      deviceLimits: this.error === null,
      deviceLimitsError: this.error ?? '',
      deviceSource: this.engineCounts ? DEVICE_SOURCE_ENGINE : DEVICE_SOURCE_ACCESS_LOG,
    };
  }

  /** A stream opened: the whole picture again. */
  opened(): void {
    this.sentReport = '';
    this.sentAt = 0;
    if (this.lastReport !== '') this.flushReport();
  }

  /** One pass (passes never overlap: a pass asked for while one runs waits for it). */
  pass(): Promise<void> {
    this.running ??= this.once().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async once(): Promise<void> {
    let snapshot: LiveSnapshot;
    try {
      snapshot = await this.o.live.refresh();
    } catch (err) {
      if (!this.error) this.o.log.warn({ err }, 'the socket table cannot be read: device limits not enforced');
      this.error = `the socket table cannot be read: ${(err as Error).message}`;
      return;
    }
    this.judge(snapshot, await this.engineDevices());
    await this.flush();
  }

  /** Per subscription, the devices the engine lists online; null when it lists none (no such statistics, or no answer now). */
  private async engineDevices(): Promise<Map<string, Set<string>> | null> {
    const ask = this.o.engineAddresses;
    if (!ask) return null;
    if (this.engineLacksSince !== null && this.now() - this.engineLacksSince < ENGINE_RECHECK_MS) return null;
    let online: Map<string, Map<string, number>> | null;
    try {
      online = await ask();
    } catch (err) {
      // Unavailable (restarting): the access log alone this pass.
      this.o.log.debug({ err }, 'the engine did not list its online addresses');
      return null;
    }
    if (online === null) {
      if (this.engineLacksSince === null) this.o.log.info('the engine has no online-address statistics: devices from the access log');
      this.engineLacksSince = this.now();
      this.engineCounts = false;
      return null;
    }
    this.engineLacksSince = null;
    this.engineCounts = true;
    const out = new Map<string, Set<string>>();
    for (const [email, ips] of online) {
      const id = subscriptionIdOf(email);
      if (id === undefined) continue;
      const devices = new Set<string>();
      for (const ip of ips.keys()) {
        const d = deviceAddress(ip);
        if (d !== null) devices.add(d);
      }
      if (devices.size > 0) out.set(id, devices);
    }
    return out;
  }

  /**
   * The tracker's verdict on a snapshot (and the engine's own list of online devices, when it
   * has one); the connections to end are queued (the benchmark calls it alone).
   */
  judge(snapshot: LiveSnapshot, engine: Map<string, Set<string>> | null = null): void {
    const now = snapshot.at;
    // Per user, each device with when its client last sent something.
    const live = new Map<string, Map<string, number>>();
    for (const [email, conns] of snapshot.byUser) {
      const id = subscriptionIdOf(email);
      if (id === undefined) continue;
      let devices = live.get(id);
      if (!devices) {
        devices = new Map();
        live.set(id, devices);
      }
      for (const c of conns) {
        const activeAt = c.quietMs === undefined ? now : now - c.quietMs;
        const was = devices.get(c.device);
        if (was === undefined || activeAt > was) devices.set(c.device, activeAt);
      }
    }
    // What the engine lists and the socket table does not (UDP transports, a connection newer than the table): active now.
    if (engine) {
      for (const [id, list] of engine) {
        let devices = live.get(id);
        if (!devices) {
          devices = new Map();
          live.set(id, devices);
        }
        for (const d of list) if (!devices.has(d)) devices.set(d, now);
      }
    }
    const verdict = this.tracker.pass(live, now);
    for (const [id, devices] of verdict.refused) {
      const conns = snapshot.byUser.get(userEmail(id));
      if (!conns) continue;
      for (const c of conns) {
        if (!devices.has(c.device)) continue;
        this.pending.push({ host: c.host, port: c.port, localPort: c.localPort });
        this.noteRefused(id, c.device);
      }
    }
    const report = this.tracker.report();
    const text = JSON.stringify(report);
    if (text !== this.lastReport) {
      this.lastReport = text;
      this.scheduleReport();
    }
  }

  private sighted(c: LiveConnection): void {
    const id = subscriptionIdOf(c.email);
    if (id === undefined) return;
    if (!this.tracker.sighted(id, c.device, this.now())) return;
    this.pending.push({ host: c.host, port: c.port, localPort: c.localPort });
    this.noteRefused(id, c.device);
    this.flushing ??= setImmediate(() => {
      this.flushing = null;
      void this.flush();
    });
  }

  private noteRefused(id: string, device: string): void {
    const k = `${id}|${device}`;
    if (this.logged.has(k)) return;
    if (this.logged.size > 100_000) this.logged.clear();
    this.logged.add(k);
    const denied = this.tracker.denied(id, device, this.now());
    this.o.log.info(
      {
        subscription_id: id,
        device,
        why: denied ? 'denied by the control plane (fleet-wide count)' : 'over the device limit after the grace',
      },
      'device refused: its connections of this user end',
    );
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0 || this.error) {
      this.pending = [];
      return;
    }
    const batch = this.pending;
    this.pending = [];
    try {
      const n = await (this.o.destroy ?? destroyExact)(batch, this.o.ports());
      this.ended += n;
      if (n > 0) this.o.log.debug({ connections: n }, 'connections of refused devices ended');
    } catch (err) {
      this.o.log.warn({ err }, 'connections of refused devices not ended');
    }
  }

  private scheduleReport(): void {
    if (this.reportTimer) return;
    const wait = Math.max(0, this.sentAt + (this.o.reportEveryMs ?? 5000) - this.now());
    if (wait === 0) {
      this.flushReport();
      return;
    }
    this.reportTimer = setTimeout(() => {
      this.reportTimer = null;
      this.flushReport();
    }, wait);
    this.reportTimer.unref();
  }

  private flushReport(): void {
    if (this.lastReport === this.sentReport) return;
    const users = JSON.parse(this.lastReport || '[]') as UserDevices[];
    if (this.o.send({ devices: { users } })) {
      this.sentReport = this.lastReport;
      this.sentAt = this.now();
    }
  }
}
