import { isIPv4 } from 'node:net';
import { canonicalHost, type UserLimits, userEmail } from '@svc/proto';
import type { Logger } from 'pino';
import {
  classDelLines,
  classLines,
  deviceSetupLines,
  type FilterHandle,
  filterDelLine,
  ifbFilterDelLines,
  ifbFilterLines,
  ifbLinkLines,
  ingressFilterLine,
  MAX_NODES_PER_BUCKET,
  NFT_TABLE,
  nftElementScript,
  nftTableScript,
  PRIO4,
  PRIO6,
  SMALL,
  type Tuple,
} from './shape-commands.ts';
import { probeShaping, type ShapeDevice } from './shape-probe.ts';
import { type Runner, spawnRunner } from './shape-runner.ts';

/**
 * Per-user speed caps in the kernel (UserLimits.upload_bps / download_bps; shape-commands.ts has
 * the design). The Shaper keeps what it installed in memory and changes only the difference on
 * each pass: nft map elements in one `nft -f -` transaction, classes and u32 filters in one or
 * two `tc -batch -` runs. Nothing is installed while the desired state caps nobody; the roots,
 * IFBs and table are set up as soon as it caps someone (so a capped user's first connection
 * needs only its class, filters and map elements), and everything is removed when it caps
 * nobody again and by stop(). A failure anywhere makes the next pass rebuild
 * from nothing; a node that cannot shape at all says why in status() (speed_caps false).
 */
export interface ShaperOptions {
  /** Devices towards the clients (default: the devices of the default routes). */
  devices?: string[];
  run?: Runner;
  log?: Logger;
  /** Why the process cannot administer the network (default: CapEff lacks CAP_NET_ADMIN), null when it can. */
  capability?: () => Promise<string | null>;
}

export interface ShapingStatus {
  speedCaps: boolean;
  error: string;
  devices: string[];
}

interface Cap {
  upBps: number;
  downBps: number;
}

interface UserClass extends Cap {
  minor: number;
}

type Device = ShapeDevice;

const MAX_MINOR = SMALL - 1; // the leaves are minor|4000 and minor|8000; leaf queues take the minor as their handle
const tupleKey = (t: Tuple) => `${t.host}|${t.port}`;

export class Shaper {
  private readonly run: Runner;
  private caps = new Map<string, Cap>();
  private devices: Device[] | null = null;
  private error = '';
  private probed = false;
  /** Installed: the nft table and tc roots exist on `devices`. */
  private installed = false;
  private broken = false;
  private readonly classes = new Map<string, UserClass>();
  private readonly down = new Map<string, { tuple: Tuple; minor: number }>();
  private readonly up = new Map<string, { tuple: Tuple; minor: number; handle: FilterHandle }>();
  private readonly nodesUsed = new Map<string, Set<number>>();
  private busy: Promise<void> = Promise.resolve();

  constructor(private readonly opts: ShaperOptions = {}) {
    this.run = opts.run ?? spawnRunner();
  }

  /** The caps of a desired state (users with neither cap are not shaped). */
  setLimits(limits: readonly UserLimits[]): void {
    const caps = new Map<string, Cap>();
    for (const l of limits) {
      const upBps = Number(l.uploadBps);
      const downBps = Number(l.downloadBps);
      if (upBps > 0 || downBps > 0) caps.set(userEmail(l.subscriptionId), { upBps, downBps });
    }
    this.caps = caps;
  }

  /** Whether `email` has a cap (the agent passes only their connections on at once). */
  capped(email: string): boolean {
    return this.caps.has(email);
  }

  status(): ShapingStatus {
    return {
      speedCaps: this.probed && this.error === '',
      error: this.probed ? this.error : 'not probed yet',
      devices: this.error === '' && this.devices ? this.devices.flatMap((d) => [d.name, d.ifb]) : [],
    };
  }

  /**
   * Checks that this node can shape without touching its devices: CAP_NET_ADMIN, nft and tc,
   * the devices, and every kernel piece on a throwaway IFB (HTB, u32, ingress, mirred) and a
   * throwaway nft table (a classid map and `meta priority set`).
   */
  probe(): Promise<ShapingStatus> {
    return this.serial(async () => {
      this.error = await this.probeError().catch((err: unknown) => `speed caps cannot be probed: ${String(err)}`);
      this.probed = true;
      if (this.error) this.opts.log?.warn({ why: this.error }, 'speed caps cannot be enforced on this node');
      return this.status();
    });
  }

  /**
   * One pass: the live connections of the users (email -> client tuples) against the caps.
   * Users without a cap are ignored; their packets meet no filter and no map element.
   */
  apply(connections: Map<string, Iterable<Tuple>>): Promise<void> {
    return this.serial(async () => {
      if (!this.probed) {
        this.error = await this.probeError().catch((err: unknown) => `speed caps cannot be probed: ${String(err)}`);
        this.probed = true;
      }
      if (this.error || !this.devices) return;
      try {
        await this.pass(connections);
      } catch (err) {
        this.broken = true;
        this.opts.log?.warn({ err }, 'speed caps: the pass failed; the next one rebuilds');
      }
    });
  }

  /** Removes everything the Shaper installed (the nft table, the roots, its filters, the IFBs). */
  stop(): Promise<void> {
    return this.serial(async () => {
      if (this.devices && (this.installed || this.broken)) await this.teardown(this.devices);
      this.forget();
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.busy.then(fn, fn);
    this.busy = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  private forget(): void {
    this.installed = false;
    this.broken = false;
    this.classes.clear();
    this.down.clear();
    this.up.clear();
    this.nodesUsed.clear();
  }

  // ---- probe (shape-probe.ts) ----------------------------------------------------------------

  private async probeError(): Promise<string> {
    const found = await probeShaping(this.run, this.opts);
    if (found.devices) this.devices = found.devices;
    return found.error;
  }

  // ---- passes -------------------------------------------------------------------------------

  private async pass(connections: Map<string, Iterable<Tuple>>): Promise<void> {
    const devices = this.devices as Device[];
    if (this.broken) {
      await this.teardown(devices);
      this.forget();
    }
    // What should be: per capped user with live connections, its class and tuples.
    const wantClasses = new Map<string, Cap>();
    const wantDown = new Map<string, { tuple: Tuple; email: string }>();
    const wantUp = new Map<string, { tuple: Tuple; email: string }>();
    for (const [email, tuples] of connections) {
      const cap = this.caps.get(email);
      if (!cap) continue;
      for (const raw of tuples) {
        const host = canonicalHost(raw.host);
        if (host === null || !Number.isInteger(raw.port) || raw.port < 1 || raw.port > 65535) continue;
        const tuple = { host, port: raw.port };
        wantClasses.set(email, cap);
        if (cap.downBps > 0) wantDown.set(tupleKey(tuple), { tuple, email });
        if (cap.upBps > 0) wantUp.set(tupleKey(tuple), { tuple, email });
      }
    }
    // Set up as soon as the desired state caps someone (not at a capped user's first connection:
    // the roots, IFBs and table take several runs of ip, tc and nft, during which that connection
    // would go out unshaped); everything removed once it caps nobody.
    if (this.caps.size === 0) {
      if (this.installed) {
        await this.teardown(devices);
        this.forget();
      }
      return;
    }
    const setup = !this.installed;
    const adds: string[] = [];
    const dels: string[] = [];
    const classDels: string[] = [];
    const ipLines: string[] = [];
    if (setup) {
      for (const d of devices) {
        await this.teardown([d]);
        ipLines.push(...ifbLinkLines(d.ifb));
      }
    }
    // Classes: new, changed, gone (a minor let go in this pass is not given out again before the next).
    const freeing = new Set<number>();
    for (const [email, had] of this.classes) if (!wantClasses.has(email)) freeing.add(had.minor);
    for (const [email, cap] of wantClasses) {
      const had = this.classes.get(email);
      if (had && had.upBps === cap.upBps && had.downBps === cap.downBps) continue;
      const minor = had?.minor ?? this.freeMinor(freeing);
      if (minor === null) {
        wantClasses.delete(email);
        continue;
      }
      for (const d of devices) {
        if (cap.downBps > 0) adds.push(...classLines(d.name, minor, cap.downBps, false));
        else if (had && had.downBps > 0) classDels.push(...classDelLines(d.name, minor));
        if (cap.upBps > 0) adds.push(...classLines(d.ifb, minor, cap.upBps, true));
        else if (had && had.upBps > 0) classDels.push(...classDelLines(d.ifb, minor));
      }
      this.classes.set(email, { ...cap, minor });
    }
    for (const [email, had] of this.classes) {
      if (wantClasses.has(email)) continue;
      for (const d of devices) {
        if (had.downBps > 0) classDels.push(...classDelLines(d.name, had.minor));
        if (had.upBps > 0) classDels.push(...classDelLines(d.ifb, had.minor));
      }
      this.classes.delete(email);
    }
    const minorOf = (email: string) => (this.classes.get(email) as UserClass).minor;
    // Upload filters: gone or moved first (their handles are reused), then new.
    for (const [k, had] of this.up) {
      const want = wantUp.get(k);
      if (want && this.classes.get(want.email)?.minor === had.minor) continue;
      for (const d of devices) {
        dels.push(filterDelLine(d.name, 'ffff:', had.handle));
        dels.push(...ifbFilterDelLines(d.ifb, had.handle));
      }
      this.nodesUsed.get(bucketKey(had.handle))?.delete(had.handle.node);
      this.up.delete(k);
    }
    for (const [k, want] of wantUp) {
      if (this.up.has(k)) continue;
      const handle = this.freeHandle(want.tuple);
      if (!handle) continue;
      const minor = minorOf(want.email);
      for (const d of devices) {
        adds.push(ingressFilterLine(d.name, d.ifb, want.tuple, handle));
        adds.push(...ifbFilterLines(d.ifb, want.tuple, handle, minor));
      }
      this.up.set(k, { tuple: want.tuple, minor, handle });
    }
    // Download map elements.
    const nftAdd: Array<{ tuple: Tuple; minor: number }> = [];
    const nftDel: Tuple[] = [];
    for (const [k, had] of this.down) {
      const want = wantDown.get(k);
      if (want && this.classes.get(want.email)?.minor === had.minor) continue;
      nftDel.push(had.tuple);
      this.down.delete(k);
    }
    for (const [k, want] of wantDown) {
      if (this.down.has(k)) continue;
      const entry = { tuple: want.tuple, minor: minorOf(want.email) };
      nftAdd.push(entry);
      this.down.set(k, entry);
    }
    // Apply: links, then tc (removed filters, new classes and filters), nft, then removed classes.
    if (ipLines.length > 0) await this.must('ip', ['-batch', '-'], ipLines);
    const setupLines: string[] = [];
    if (setup) {
      for (const d of devices) {
        const ingress = await this.run('tc', ['qdisc', 'show', 'dev', d.name, 'ingress']);
        setupLines.push(...deviceSetupLines(d.name, d.ifb, ingress.stdout.trim() !== ''));
      }
    }
    const tcLines = [...setupLines, ...dels, ...adds];
    if (tcLines.length > 0) await this.must('tc', ['-batch', '-'], tcLines);
    this.installed = true;
    const script = setup
      ? nftTableScript(
          devices.map((d) => d.name),
          [...this.down.values()],
        )
      : nftElementScript(nftAdd, nftDel);
    if (script) await this.must('nft', ['-f', '-'], [script.trimEnd()]);
    if (classDels.length > 0) await this.must('tc', ['-batch', '-'], classDels);
  }

  private async must(bin: string, args: string[], lines: string[]): Promise<void> {
    const r = await this.run(bin, args, `${lines.join('\n')}\n`);
    if (r.code !== 0) throw new Error(`${bin} ${args.join(' ')}: ${firstLine(r.stderr) || `exit ${r.code}`}`);
  }

  private freeMinor(freeing: Set<number>): number | null {
    const used = new Set([...this.classes.values()].map((c) => c.minor));
    for (const m of freeing) used.add(m);
    for (let m = 1; m <= MAX_MINOR; m++) if (!used.has(m)) return m;
    return null;
  }

  private freeHandle(t: Tuple): FilterHandle | null {
    const v6 = !isIPv4(t.host);
    const bucket = t.port & 0xff;
    const key = bucketKey({ v6, bucket, node: 0 });
    let used = this.nodesUsed.get(key);
    if (!used) {
      used = new Set();
      this.nodesUsed.set(key, used);
    }
    for (let node = 1; node <= MAX_NODES_PER_BUCKET; node++) {
      if (!used.has(node)) {
        used.add(node);
        return { v6, bucket, node };
      }
    }
    return null;
  }

  /** Removes what a Shaper installs on these devices (whatever is there; errors ignored). */
  private async teardown(devices: Device[]): Promise<void> {
    await this.run('nft', ['-f', '-'], `table inet ${NFT_TABLE} {}\ndelete table inet ${NFT_TABLE}\n`).catch(() => null);
    for (const d of devices) {
      const root = await this.run('tc', ['qdisc', 'show', 'dev', d.name, 'root']).catch(() => null);
      if (root?.stdout.includes('htb 5c00:')) await this.run('tc', ['qdisc', 'del', 'dev', d.name, 'root']).catch(() => null);
      await this.run(
        'tc',
        ['-force', '-batch', '-'],
        [PRIO4, PRIO6].map((p) => `filter del dev ${d.name} parent ffff: prio ${p}`).join('\n') + '\n',
      ).catch(() => null);
      const left = await this.run('tc', ['filter', 'show', 'dev', d.name, 'parent', 'ffff:']).catch(() => null);
      if (left && left.code === 0 && left.stdout.trim() === '')
        await this.run('tc', ['qdisc', 'del', 'dev', d.name, 'ingress']).catch(() => null);
      await this.run('ip', ['link', 'del', d.ifb]).catch(() => null);
    }
  }
}

const bucketKey = (h: FilterHandle) => `${h.v6 ? 6 : 4}:${h.bucket}`;
const firstLine = (text: string) => text.trim().split('\n')[0] ?? '';
