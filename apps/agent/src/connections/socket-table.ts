import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { isIPv6 } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The kernel's table of established TCP sockets on the engine's inbound ports, read with one
 * `ss -tnH state established ( sport = :P or ... )` per call: the kernel filters (inet_diag), so
 * the output holds only the engine's client sockets. Measured on this machine with 10,000
 * established sockets: ss with the port filter 45 ms a call (process start included), reading
 * /proc/net/tcp and tcp6 42 ms before any parsing, so ss costs no more and its output needs no
 * hex decoding. Lines are split on spaces; no regular expression runs over them.
 */
export interface Socket {
  /** The client's address as ss prints it (IPv6 and IPv4-mapped without brackets). */
  host: string;
  port: number;
  /** The engine's port (one of the inbounds'). */
  localPort: number;
  /**
   * Milliseconds since the client last sent anything, data or an ACK (ss -i: the lesser of
   * lastrcv and lastack); absent when unknown. The engine's TCP keepalive (Go's default: a probe
   * after 15 s idle, then every 15 s) makes a live idle client answer at least every ~15 s, so a
   * socket quiet for longer has most likely lost its client (a phone that left a network).
   */
  quietMs?: number;
}

/** The number after ` name:` in text[from, to) (an ss -i line), or undefined. */
function field(text: string, from: number, to: number, name: string): number | undefined {
  const at = text.indexOf(` ${name}:`, from);
  if (at < 0 || at >= to) return undefined;
  let v = 0;
  let i = at + name.length + 2;
  const start = i;
  for (; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) break;
    v = v * 10 + (c - 48);
  }
  return i > start ? v : undefined;
}

/**
 * Parses ss's `-tn[i]H state established` lines: `Recv-Q Send-Q local:port peer:port [...]`,
 * each followed with -i by a line starting with a tab that holds `lastrcv:N lastack:N`.
 */
export function parseSsLines(text: string, out: Socket[] = []): Socket[] {
  let start = 0;
  let last: Socket | null = null;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const first = text.charCodeAt(start);
    if (first === 9 || first === 32) {
      // An -i line (not copied out: it is most of the text).
      if (last) {
        const rcv = field(text, start, end, 'lastrcv');
        const ack = field(text, start, end, 'lastack');
        if (rcv !== undefined || ack !== undefined) last.quietMs = Math.min(rcv ?? Number.MAX_SAFE_INTEGER, ack ?? Number.MAX_SAFE_INTEGER);
      }
      last = null;
      start = end + 1;
      continue;
    }
    const line = text.slice(start, end);
    start = end + 1;
    last = null;
    let local = '';
    let peer = '';
    let k = 0;
    for (const w of line.split(' ')) {
      if (w === '') continue;
      if (k === 2) local = w;
      else if (k === 3) {
        peer = w;
        break;
      }
      k++;
    }
    if (peer === '') continue;
    const lc = local.lastIndexOf(':');
    const pc = peer.lastIndexOf(':');
    if (lc < 0 || pc <= 0) continue;
    const localPort = Number(local.slice(lc + 1));
    const port = Number(peer.slice(pc + 1));
    let host = peer.slice(0, pc);
    if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
    const zone = host.indexOf('%');
    if (zone >= 0) host = host.slice(0, zone);
    if (!Number.isInteger(port) || !Number.isInteger(localPort) || port <= 0 || host === '') continue;
    last = { host, port, localPort };
    out.push(last);
  }
  return out;
}

const portFilter = (ports: Iterable<number>): string[] => {
  const parts: string[] = [];
  for (const p of ports) parts.push(parts.length === 0 ? `sport = :${p}` : `or sport = :${p}`);
  return ['(', ...parts.join(' ').split(' '), ')'];
};

/** Established sockets on these local ports (empty when no port). Throws when ss cannot run. */
export async function establishedSockets(ports: Iterable<number>): Promise<Socket[]> {
  const list = [...new Set(ports)];
  if (list.length === 0) return [];
  const { stdout } = await run('ss', ['-tniH', 'state', 'established', ...portFilter(list)], { timeout: 10_000, maxBuffer: 1 << 30 });
  return parseSsLines(stdout);
}

/**
 * The ss filter of exactly these sockets: client address and port, and the engine's port (a
 * socket known only from the access log, localPort 0, matches on any of `ports`).
 */
const tupleFilter = (sockets: Socket[], ports: number[]): string[] => {
  const words: string[] = ['('];
  sockets.forEach((s, i) => {
    if (i > 0) words.push('or');
    const dst = isIPv6(s.host) ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`;
    words.push('(', 'dst', dst, 'and');
    if (s.localPort > 0) words.push('sport', '=', `:${s.localPort}`);
    else words.push(...portFilter(ports));
    words.push(')');
  });
  words.push(')');
  return words;
};

/**
 * Ends exactly these sockets with SOCK_DESTROY (`ss -K`, 64 to a call): the client sees a reset,
 * and no other socket of the same address (another user behind the same NAT) is touched.
 * Resolves with how many ss reported destroyed; throws when ss cannot run.
 */
export async function destroyExact(sockets: Socket[], ports: Iterable<number> = []): Promise<number> {
  let ended = 0;
  const portList = [...new Set(ports)];
  const known = portList.length > 0 ? sockets : sockets.filter((s) => s.localPort > 0);
  for (let i = 0; i < known.length; i += 64) {
    const batch = known.slice(i, i + 64);
    const { stdout } = await run('ss', ['-K', '-tnH', 'state', 'established', ...tupleFilter(batch, portList)], {
      timeout: 10_000,
      maxBuffer: 1 << 26,
    });
    ended += parseSsLines(stdout).length;
  }
  return ended;
}

/**
 * Whether sockets can be destroyed here: ss runs and the process has CAP_NET_ADMIN in its
 * effective set (bit 12 of CapEff in /proc/self/status). Null when they can, else why not.
 */
export async function socketControlMissing(): Promise<string | null> {
  try {
    await run('ss', ['-V'], { timeout: 5000 });
  } catch {
    return 'ss (iproute2) is not installed';
  }
  const status = await readFile('/proc/self/status', 'utf8').catch(() => '');
  const line = status.split('\n').find((l) => l.startsWith('CapEff:'));
  if (!line) return 'the capabilities of the agent cannot be read (/proc/self/status)';
  const hex = line.slice('CapEff:'.length).trim();
  let caps: bigint;
  try {
    caps = BigInt(`0x${hex}`);
  } catch {
    return 'the capabilities of the agent cannot be read (/proc/self/status)';
  }
  if ((caps & (1n << 12n)) === 0n) return 'the agent lacks CAP_NET_ADMIN: it cannot end sockets (ss -K)';
  return null;
}
