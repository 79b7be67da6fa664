import { execFileSync } from 'node:child_process';
import type { UserLimits } from '@svc/proto';

/**
 * What the speed-cap tests share (speed-caps, speed-caps-engine, e2e/speed-caps-loop): the
 * check that this machine can run them, network namespaces and veth pairs of the tests' own
 * (each file its own names: two files must never touch the same ones), the measured rate, and
 * a user's limits with only caps.
 */

/** Why the tests cannot run here (not root, a program missing), or null. `bins`: [program, its version flag]. */
export function shapingSkipReason(extra: ReadonlyArray<readonly [string, string]> = []): string | null {
  if (process.getuid?.() !== 0) return 'not root (network namespaces and tc need it)';
  for (const [bin, arg] of [['ip', '-V'], ['tc', '-V'], ['nft', '--version'], ...extra] as const) {
    try {
      execFileSync(bin, [arg], { stdio: 'ignore' });
    } catch {
      return `${bin} is not installed${bin === 'nft' ? ' (apt-get install nftables)' : ''}`;
    }
  }
  return null;
}

export const sh = (...args: string[]): string =>
  execFileSync(args[0] as string, args.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** sh, whatever it answers (cleanup of what may not exist). */
export const quietly = (...args: string[]): void => {
  try {
    sh(...args);
  } catch {}
};

/** One end of a veth pair: its namespace (null: this one, the host's), device name and addresses. */
export interface VethEnd {
  ns: string | null;
  dev: string;
  addresses: string[];
  /**
   * The namespace's TCP congestion control. Client namespaces take reno, loss-based as cubic
   * (what Linux, Android, Windows and macOS clients send with) and the one a namespace may
   * always choose (cubic only where the host allows it). A namespace inherits the host's default,
   * BBR on some machines here, and a BBR sender that met a 1 Mbit/s cap after tens of ms
   * unshaped at the veth's Gbit/s kept pacing at the 5.8 Gbit/s it had measured, its round trip
   * grew to 0.8 s through the cap's queue, and it sat in a 7 s retransmission timeout: no
   * measurement of the cap, only of BBR's recovery from a 5,000-fold drop.
   */
  congestionControl?: 'cubic' | 'reno' | 'bbr';
}

const inNs = (ns: string | null, ...args: string[]): string[] => (ns ? ['ip', '-n', ns, ...args] : ['ip', ...args]);

/**
 * Namespaces made afresh (an earlier run's removed first) and a veth pair between `a` and `b`,
 * addressed and up, with each namespace's loopback up. IPv6 addresses skip duplicate detection.
 */
export function vethPair(a: VethEnd, b: VethEnd): void {
  const spaces = [...new Set([a.ns, b.ns].filter((n): n is string => n !== null))];
  for (const ns of spaces) {
    quietly('ip', 'netns', 'del', ns);
    sh('ip', 'netns', 'add', ns);
  }
  if (a.ns === null) quietly('ip', 'link', 'del', a.dev);
  sh(...inNs(a.ns, 'link', 'add', a.dev, 'type', 'veth', 'peer', 'name', b.dev, ...(b.ns ? ['netns', b.ns] : [])));
  for (const end of [a, b]) {
    for (const addr of end.addresses) sh(...inNs(end.ns, 'addr', 'add', addr, 'dev', end.dev, ...(addr.includes(':') ? ['nodad'] : [])));
    sh(...inNs(end.ns, 'link', 'set', end.dev, 'up'));
  }
  for (const ns of spaces) sh('ip', '-n', ns, 'link', 'set', 'lo', 'up');
  for (const end of [a, b])
    if (end.ns && end.congestionControl)
      sh('ip', 'netns', 'exec', end.ns, 'sysctl', '-qw', `net.ipv4.tcp_congestion_control=${end.congestionControl}`);
}

/** Removes the namespaces (their devices go with them) and host-side devices. */
export function removeNetns(namespaces: string[], hostDevices: string[] = []): void {
  for (const ns of namespaces) quietly('ip', 'netns', 'del', ns);
  for (const dev of hostDevices) quietly('ip', 'link', 'del', dev);
}

/** Least-squares slope of bytes over milliseconds (a transfer's rate from its samples). */
export function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** UserLimits with caps only (bits per second; 0: uncapped). */
export const capLimits = (id: string, up: number, down: number): UserLimits => ({
  subscriptionId: id,
  deviceLimit: 0,
  uploadBps: BigInt(up),
  downloadBps: BigInt(down),
  notAfterMs: 0n,
  sliceId: 0n,
  sliceBytes: 0n,
});
