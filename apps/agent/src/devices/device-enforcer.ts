import { type AgentMessage, type EnforcementStatus, subscriptionIdOf, type UserDevices, type UserLimits, userEmail } from '@svc/proto';
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
  /** Why sockets cannot be ended (default: ss and CAP_NET_ADMIN checked); null when they can. */
  missing?: () => Promise<string | null>;
  now?: () => number;
}

export const DEVICE_SOURCE_ACCESS_LOG = 'access-log';

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
    return { deviceLimits: this.error === null, deviceLimitsError: this.error ?? '', deviceSource: DEVICE_SOURCE_ACCESS_LOG };
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
    this.judge(snapshot);
    await this.flush();
  }

  /** The tracker's verdict on a snapshot; the connections to end are queued (the benchmark calls it alone). */
  judge(snapshot: LiveSnapshot): void {
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
