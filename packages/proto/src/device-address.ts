/**
 * A device, for device limits (UserLimits.device_limit, DeviceReport, DeviceDenials), is a client
 * address: an IPv4 address as it is, or an IPv6 address folded to its /64 (one home or phone
 * network hands out many addresses of one /64, and privacy addresses rotate within it), written
 * as its first four groups in lowercase hex without leading zeros and `::/64`, never compressed
 * further: `2001:db8:0:2::/64`. An IPv4-mapped IPv6 address (`::ffff:198.51.100.7`, what a dual
 * stack socket reports for an IPv4 client) is the IPv4 address. One rule for the agent (which
 * counts) and the control plane (which counts across nodes and lists them).
 *
 * Parsed by hand, character by character: no regular expression runs over client addresses.
 */

/** The device key of a client address (brackets, a zone `%eth0` allowed), or null when it is none. */
export function deviceAddress(address: string): string | null {
  const host = bare(address);
  if (host === null) return null;
  if (!host.includes(':')) return ipv4(host) ? host : null;
  const groups = ipv6Groups(host);
  if (!groups) return null;
  const mapped = mappedIpv4(groups);
  if (mapped) return mapped;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/**
 * The client host in one spelling, for matching the same socket seen by two sources (the
 * engine's access log and the kernel's socket table): IPv4 as it is (an IPv4-mapped IPv6 address
 * becomes its IPv4), IPv6 as eight lowercase groups without leading zeros, uncompressed. Null
 * when it is not an address.
 */
export function canonicalHost(address: string): string | null {
  const host = bare(address);
  if (host === null) return null;
  if (!host.includes(':')) return ipv4(host) ? host : null;
  const groups = ipv6Groups(host);
  if (!groups) return null;
  return mappedIpv4(groups) ?? groups.map((g) => g.toString(16)).join(':');
}

function bare(address: string): string | null {
  let h = address;
  if (h.length > 64) return null;
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  const zone = h.indexOf('%');
  if (zone >= 0) h = h.slice(0, zone);
  return h === '' ? null : h;
}

function ipv4(h: string): boolean {
  const parts = h.split('.');
  if (parts.length !== 4) return false;
  for (const p of parts) {
    if (p.length === 0 || p.length > 3) return false;
    for (let i = 0; i < p.length; i++) {
      const c = p.charCodeAt(i);
      if (c < 48 || c > 57) return false;
    }
    if (p.length > 1 && p[0] === '0') return false;
    if (Number(p) > 255) return false;
  }
  return true;
}

function hexGroup(p: string): number | null {
  if (p.length === 0 || p.length > 4) return null;
  let v = 0;
  for (let i = 0; i < p.length; i++) {
    const c = p.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (d < 0) return null;
    v = v * 16 + d;
  }
  return v;
}

/** Groups of one side of `::` (an IPv4 tail allowed when `last`), or null. */
function side(text: string, last: boolean): number[] | null {
  if (text === '') return [];
  const parts = text.split(':');
  const out: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as string;
    if (last && i === parts.length - 1 && p.includes('.')) {
      if (!ipv4(p)) return null;
      const [a, b, c, d] = p.split('.').map(Number) as [number, number, number, number];
      out.push(a * 256 + b, c * 256 + d);
      continue;
    }
    const g = hexGroup(p);
    if (g === null) return null;
    out.push(g);
  }
  return out;
}

/** The eight 16-bit groups of an IPv6 address, or null. */
export function ipv6Groups(h: string): number[] | null {
  const gap = h.indexOf('::');
  if (gap >= 0) {
    if (h.indexOf('::', gap + 1) >= 0) return null;
    const head = side(h.slice(0, gap), false);
    const tail = side(h.slice(gap + 2), true);
    if (!head || !tail || head.length + tail.length > 7) return null;
    return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  }
  const all = side(h, true);
  return all && all.length === 8 ? all : null;
}

function mappedIpv4(g: number[]): string | null {
  if (g[0] || g[1] || g[2] || g[3] || g[4] || g[5] !== 0xffff) return null;
  const hi = g[6] as number;
  const lo = g[7] as number;
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}
