import { canonicalHost, deviceAddress } from '@svc/proto';
import type { AccessEntry } from './access-log.ts';
import { establishedSockets, type Socket } from './socket-table.ts';

/**
 * Who is connected now: the kernel's established sockets on the engine's inbound ports
 * (socket-table.ts, one ss call per refresh) joined with the engine's access log, which names
 * the user (email) of each client address and port as it accepts the connection. A socket whose
 * access line the agent never saw (accepted before the agent started, or a line lost) has no
 * user and is counted as `unattributed`.
 *
 * For device limits, speed caps and entitlements alike:
 * - `seen(entry)` feeds each access-log entry (ConnectionBook.see's result), and calls the
 *   `onAccess` listeners at once (kill on sight needs no wait for the next refresh);
 * - `refresh()` reads the socket table and answers the snapshot: per user email, its live
 *   connections (client host and port, engine port, device key, how long the client has been
 *   silent). The device enforcer refreshes every 2 s; other passes read `snapshot` or
 *   subscribe with `onRefresh` instead of running ss again.
 */
export interface LiveConnection extends Socket {
  email: string;
  /** deviceAddress(host): the IPv4 address or the IPv6 /64. */
  device: string;
}

export interface LiveSnapshot {
  /** When the socket table was read (Date.now()). */
  at: number;
  /** Live connections per user email. */
  byUser: Map<string, LiveConnection[]>;
  /** Live sockets on the inbound ports whose user is unknown. */
  unattributed: number;
}

export interface LiveConnectionsOptions {
  /** The engine's inbound ports now. */
  ports: () => Iterable<number>;
  /** The socket table (tests and the benchmark hand in their own). */
  sockets?: (ports: Iterable<number>) => Promise<Socket[]>;
  /** How long an access entry whose socket is not (or no longer) in the table is kept (default 30 s). */
  keepMs?: number;
  /** At most this many entries (oldest dropped first; default 1,000,000). */
  maxEntries?: number;
  now?: () => number;
}

interface Owner {
  email: string;
  device: string;
  at: number;
}

const key = (host: string, port: number): string => `${host}|${port}`;

/**
 * canonicalHost of an address as the kernel prints it, with its two common spellings taken
 * without a parse: dotted IPv4, and IPv4-mapped IPv6 (`::ffff:a.b.c.d`, a dual-stack socket).
 */
const tableHost = (h: string): string | null =>
  !h.includes(':') ? h : h.startsWith('::ffff:') && h.includes('.') ? h.slice(7) : canonicalHost(h);

export class LiveConnections {
  /** canonicalHost|port -> the user the engine accepted it for, in order of arrival. */
  private readonly owners = new Map<string, Owner>();
  private readonly listeners: Array<(c: LiveConnection) => void> = [];
  private readonly refreshed: Array<(s: LiveSnapshot) => void> = [];
  private readonly now: () => number;
  private last: LiveSnapshot | null = null;

  constructor(private readonly opts: LiveConnectionsOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Called for every access entry as the engine logs it (kill on sight). */
  onAccess(listener: (c: LiveConnection) => void): void {
    this.listeners.push(listener);
  }

  /** Called with every new snapshot (after each refresh). */
  onRefresh(listener: (s: LiveSnapshot) => void): void {
    this.refreshed.push(listener);
  }

  /** Feeds one access-log entry (null, for lines that are none, is ignored). */
  seen(entry: AccessEntry | null): void {
    if (!entry) return;
    const host = canonicalHost(entry.host);
    const device = deviceAddress(entry.host);
    if (host === null || device === null) return;
    const k = key(host, entry.port);
    this.owners.delete(k);
    this.owners.set(k, { email: entry.email, device, at: this.now() });
    const max = this.opts.maxEntries ?? 1_000_000;
    while (this.owners.size > max) this.owners.delete(this.owners.keys().next().value as string);
    if (this.listeners.length === 0) return;
    // localPort 0: not known from the log line (the socket table says it on the next refresh).
    const c: LiveConnection = { host: entry.host, port: entry.port, localPort: 0, email: entry.email, device };
    for (const l of this.listeners) l(c);
  }

  /** Reads the socket table (one ss call) and joins it with the access log. */
  async refresh(): Promise<LiveSnapshot> {
    const sockets = await (this.opts.sockets ?? establishedSockets)(this.opts.ports());
    return this.join(sockets);
  }

  /** The join of a socket table with the access entries seen (refresh without ss). */
  join(sockets: Socket[]): LiveSnapshot {
    const at = this.now();
    const byUser = new Map<string, LiveConnection[]>();
    const live = new Set<string>();
    let unattributed = 0;
    for (const s of sockets) {
      const host = tableHost(s.host);
      if (host === null) continue;
      const k = key(host, s.port);
      const owner = this.owners.get(k);
      if (!owner) {
        unattributed++;
        continue;
      }
      live.add(k);
      let list = byUser.get(owner.email);
      if (!list) {
        list = [];
        byUser.set(owner.email, list);
      }
      const c: LiveConnection = { host: s.host, port: s.port, localPort: s.localPort, email: owner.email, device: owner.device };
      if (s.quietMs !== undefined) c.quietMs = s.quietMs;
      list.push(c);
    }
    // Entries of sockets that ended are forgotten once they are older than keepMs (an entry
    // logged just after the table was read is kept for the next refresh).
    const keepMs = this.opts.keepMs ?? 30_000;
    for (const [k, o] of this.owners) {
      if (!live.has(k) && at - o.at > keepMs) this.owners.delete(k);
    }
    this.last = { at, byUser, unattributed };
    for (const l of this.refreshed) {
      try {
        l(this.last);
      } catch {
        // A listener's failure is its own; the snapshot stands.
      }
    }
    return this.last;
  }

  /** The last snapshot (null before the first refresh). */
  get snapshot(): LiveSnapshot | null {
    return this.last;
  }

  /** Entries held (for tests and the benchmark). */
  get entries(): number {
    return this.owners.size;
  }
}
