import { isIPv6 } from 'node:net';

/**
 * What kind of network an address belongs to, as the destination policy reads it
 * (docs/threat-model.md, "Outbound calls"). Every spelling of an address lands on one class:
 * the host is normalised first (ipLiteral), IPv4 inside IPv6 (mapped, compatible, NAT64,
 * 6to4) is classified by the IPv4 address it carries.
 */
export type AddressClass =
  /** Anything routable on the internet. */
  | 'public'
  /** 127/8, ::1. */
  | 'loopback'
  /** RFC 1918, CGNAT 100.64/10, unique local fc00::/7, site-local, documentation and benchmark ranges. */
  | 'private'
  /** 169.254/16, fe80::/10: where cloud metadata services and link-local services answer. */
  | 'link-local'
  /** Cloud instance metadata and platform endpoints outside link-local (Alibaba, Azure, Oracle Classic, AWS IPv6). */
  | 'metadata'
  /** 0/8, ::: "this host" (Linux connects 0.0.0.0 to itself). */
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  /** 240/4, Teredo, discard-only: never a legitimate destination. */
  | 'reserved';

/** Classes no setting allows. */
export const NEVER_ALLOWED: ReadonlySet<AddressClass> = new Set([
  'link-local',
  'metadata',
  'unspecified',
  'multicast',
  'broadcast',
  'reserved',
]);
/** Classes allowed only when the owner allows private networks. */
export const PRIVATE_CLASSES: ReadonlySet<AddressClass> = new Set(['loopback', 'private']);

/**
 * The address a host names literally, in canonical form (`127.0.0.1`, `::ffff:a9fe:a9fe`), or
 * null for a name to be resolved. IPv4 is read as inet_aton and the WHATWG URL parser read it:
 * one to four parts, each decimal, octal (leading 0) or hex (0x), the last filling the
 * remaining bytes (`2852039166`, `0xa9fea9fe`, `0251.0376.0251.0376`, `0x7f.1`, `127.1`). IPv6
 * may come in brackets, with a zone (`%eth0`), with a dotted IPv4 tail.
 */
export function ipLiteral(host: string): string | null {
  let h = host.trim();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  const v6 = parseIpv6(h);
  if (v6) return formatIpv6(v6);
  const v4 = parseIpv4(h.endsWith('.') ? h.slice(0, -1) : h);
  return v4 ? v4.join('.') : null;
}

/** The class of an address in any spelling ipLiteral reads; a host that is no address literal throws. */
export function classifyAddress(address: string): AddressClass {
  const literal = ipLiteral(address);
  if (literal === null) throw new TypeError(`not an IP address: ${address}`);
  const v6 = parseIpv6(literal);
  return v6 ? classifyIpv6(v6) : classifyIpv4(parseIpv4(literal) as number[]);
}

function parseIpv4(s: string): number[] | null {
  const parts = s.split('.');
  if (parts.length === 0 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(p)) n = p.length === 2 ? 0 : Number.parseInt(p.slice(2), 16);
    else if (/^0[0-7]*$/.test(p)) n = Number.parseInt(p, 8);
    else if (/^[1-9][0-9]*$/.test(p)) n = Number(p);
    else return null;
    if (!Number.isSafeInteger(n)) return null;
    nums.push(n);
  }
  const last = nums.pop() as number;
  if (nums.some((n) => n > 255) || last >= 256 ** (4 - nums.length)) return null;
  const bytes = [...nums];
  for (let i = 3 - nums.length; i >= 0; i--) bytes.push(Math.floor(last / 256 ** i) % 256);
  return bytes;
}

/** 16 bytes, or null. */
function parseIpv6(s: string): number[] | null {
  const bare = s.replace(/%.*$/, '');
  if (!bare.includes(':') || !isIPv6(bare)) return null;
  let head = bare;
  const tail: number[] = [];
  const dotted = /(?:^|:)(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (dotted) {
    const v4 = dotted[1]?.split('.').map(Number) ?? [];
    if (v4.length !== 4 || v4.some((n) => n > 255)) return null;
    tail.push(...v4);
    head = bare.slice(0, bare.length - (dotted[1]?.length ?? 0));
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const groupsWanted = 8 - tail.length / 2;
  const [left = '', right] = head.split('::');
  const l = left ? left.split(':') : [];
  const r = right !== undefined && right !== '' ? right.split(':') : [];
  const missing = groupsWanted - l.length - r.length;
  if (missing < 0 || (right === undefined && missing !== 0)) return null;
  const groups = [...l, ...Array<string>(right === undefined ? 0 : missing).fill('0'), ...r];
  const bytes: number[] = [];
  for (const g of groups) {
    const n = Number.parseInt(g, 16);
    if (!/^[0-9a-f]{1,4}$/i.test(g) || Number.isNaN(n)) return null;
    bytes.push(n >> 8, n & 0xff);
  }
  bytes.push(...tail);
  return bytes.length === 16 ? bytes : null;
}

function formatIpv6(b: readonly number[]): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i] as number) << 8) | (b[i + 1] as number));
  // Longest run of zero groups (two or more) becomes ::.
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i > 1) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

const inV4 = (b: readonly number[], net: readonly number[], bits: number): boolean => {
  const addr = (((b[0] as number) << 24) | ((b[1] as number) << 16) | ((b[2] as number) << 8) | (b[3] as number)) >>> 0;
  const base = (((net[0] ?? 0) << 24) | ((net[1] ?? 0) << 16) | ((net[2] ?? 0) << 8) | (net[3] ?? 0)) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (addr & mask) === (base & mask);
};

/** Metadata and platform endpoints that are not link-local: Alibaba, Azure's wire server, Oracle Cloud Classic. */
const V4_METADATA = ['100.100.100.200', '168.63.129.16', '192.0.0.192'];

function classifyIpv4(b: readonly number[]): AddressClass {
  if (V4_METADATA.includes(b.join('.'))) return 'metadata';
  if (inV4(b, [0], 8)) return 'unspecified';
  if (inV4(b, [127], 8)) return 'loopback';
  if (inV4(b, [169, 254], 16)) return 'link-local';
  if (b.every((x) => x === 255)) return 'broadcast';
  if (inV4(b, [224], 4)) return 'multicast';
  if (inV4(b, [240], 4)) return 'reserved';
  const privateNets: Array<[number[], number]> = [
    [[10], 8],
    [[172, 16], 12],
    [[192, 168], 16],
    [[100, 64], 10],
    [[192, 0, 0], 24],
    [[192, 0, 2], 24],
    [[198, 18], 15],
    [[198, 51, 100], 24],
    [[203, 0, 113], 24],
  ];
  return privateNets.some(([net, bits]) => inV4(b, net, bits)) ? 'private' : 'public';
}

const startsWith = (b: readonly number[], prefix: readonly number[], bits: number): boolean => {
  for (let i = 0; i < bits; i++) {
    const bit = (x: number | undefined) => ((x ?? 0) >> (7 - (i % 8))) & 1;
    if (bit(b[i >> 3]) !== bit(prefix[i >> 3])) return false;
  }
  return true;
};

function classifyIpv6(b: readonly number[]): AddressClass {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 16)) return 'unspecified';
  if (zeros(0, 15) && b[15] === 1) return 'loopback';
  // IPv4-mapped ::ffff:a.b.c.d and the deprecated IPv4-compatible ::a.b.c.d carry an IPv4 destination.
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return classifyIpv4(b.slice(12));
  if (zeros(0, 12)) return classifyIpv4(b.slice(12));
  // NAT64 (64:ff9b::/96): the gateway connects to the IPv4 address inside.
  if (startsWith(b, [0x00, 0x64, 0xff, 0x9b], 32) && zeros(4, 12)) return classifyIpv4(b.slice(12));
  if (startsWith(b, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48)) return 'private';
  // 6to4 (2002::/16): the relay forwards to the IPv4 address in bits 16-48.
  if (startsWith(b, [0x20, 0x02], 16)) return classifyIpv4(b.slice(2, 6));
  if (startsWith(b, [0xfd, 0x00, 0x0e, 0xc2], 32)) return 'metadata'; // AWS: fd00:ec2::254 and its neighbours
  if (startsWith(b, [0xfe, 0x80], 10)) return 'link-local';
  if (startsWith(b, [0xfe, 0xc0], 10)) return 'private'; // site-local (deprecated)
  if (startsWith(b, [0xfc], 7)) return 'private';
  if (startsWith(b, [0xff], 8)) return 'multicast';
  if (startsWith(b, [0x20, 0x01, 0x0d, 0xb8], 32)) return 'private'; // documentation
  if (startsWith(b, [0x20, 0x01, 0x00, 0x00], 32)) return 'reserved'; // Teredo: a tunnel to an IPv4 address we cannot judge
  if (startsWith(b, [0x01, 0x00, 0, 0, 0, 0, 0, 0], 64)) return 'reserved'; // discard-only
  return 'public';
}
