import type { EnforcementStatus, UserLimits } from '@svc/proto';
import type { Logger } from 'pino';
import type { LiveConnection, LiveConnections, LiveSnapshot } from '../connections/live-connections.ts';
import type { Tuple } from './shape-commands.ts';
import type { Runner } from './shape-runner.ts';
import { Shaper } from './shaper.ts';

/**
 * The agent's speed caps: the Shaper fed with the live connections of the capped users.
 * - every `everyMs` (default 2 s) a pass over the last live snapshot (the socket table joined
 *   with the access log; read again here when the device enforcer has not read it lately);
 * - a capped user's new connection is shaped as soon as the engine logs it (an access entry
 *   starts a pass at once), without waiting for the next socket table: bytes sent before the
 *   pass lands (the line's way through the pipe plus one nft and one tc run, tens of ms) go
 *   out unshaped;
 * - a desired state's limits take effect on the next pass, started at once.
 * `devices` ['off'] turns speed caps off (status says so).
 */
export interface SpeedCapsOptions {
  live: LiveConnections;
  log: Logger;
  devices?: string[];
  everyMs?: number;
  run?: Runner;
}

const RECENT_MS = 5_000;

export class SpeedCaps {
  readonly shaper: Shaper;
  private readonly off: boolean;
  /** Access entries of capped users not yet in a snapshot: tuple key -> entry. */
  private readonly recent = new Map<string, { email: string; tuple: Tuple; at: number }>();
  private timer: NodeJS.Timeout | null = null;
  private soon: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly o: SpeedCapsOptions) {
    this.off = o.devices?.length === 1 && o.devices[0] === 'off';
    this.shaper = new Shaper({ devices: this.off ? [] : o.devices, log: o.log, run: o.run });
    o.live.onAccess((c) => this.sighted(c));
  }

  async start(): Promise<void> {
    if (this.off) return;
    await this.shaper.probe();
    this.timer = setInterval(() => this.pass(), this.o.everyMs ?? 2000);
    this.timer.unref();
  }

  setLimits(limits: readonly UserLimits[]): void {
    this.shaper.setLimits(limits);
    this.later(0);
  }

  enforcement(): Partial<EnforcementStatus> {
    if (this.off) return { speedCaps: false, speedCapsError: 'turned off on this node (SVC_AGENT_SHAPE_DEVICES=off)', shapedDevices: [] };
    const s = this.shaper.status();
    return { speedCaps: s.speedCaps, speedCapsError: s.error, shapedDevices: s.devices };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.soon) clearTimeout(this.soon);
    await this.shaper.stop();
  }

  private sighted(c: LiveConnection): void {
    if (this.off || this.stopped || !this.shaper.capped(c.email)) return;
    this.recent.set(`${c.host}|${c.port}`, { email: c.email, tuple: { host: c.host, port: c.port }, at: Date.now() });
    this.later(0);
  }

  private later(ms: number): void {
    if (this.off || this.stopped || this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = null;
      this.pass();
    }, ms);
    this.soon.unref();
  }

  private pass(): void {
    if (this.stopped) return;
    void this.connections()
      .then((conns) => this.shaper.apply(conns))
      .catch((err) => this.o.log.warn({ err }, 'speed caps: pass failed'));
  }

  private async connections(): Promise<Map<string, Tuple[]>> {
    let snap: LiveSnapshot | null = this.o.live.snapshot;
    const now = Date.now();
    if (!snap || now - snap.at > 2 * (this.o.everyMs ?? 2000)) snap = await this.o.live.refresh();
    const out = new Map<string, Tuple[]>();
    const keys = new Set<string>();
    for (const [email, list] of snap.byUser) {
      if (!this.shaper.capped(email)) continue;
      out.set(
        email,
        list.map((c) => ({ host: c.host, port: c.port })),
      );
      for (const c of list) keys.add(`${c.host}|${c.port}`);
    }
    for (const [k, r] of this.recent) {
      if (now - r.at > RECENT_MS) {
        this.recent.delete(k);
        continue;
      }
      if (keys.has(k)) continue;
      const list = out.get(r.email) ?? [];
      list.push(r.tuple);
      out.set(r.email, list);
    }
    return out;
  }
}
