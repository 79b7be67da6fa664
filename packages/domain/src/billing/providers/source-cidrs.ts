import { BlockList, isIP } from 'node:net';

export interface CidrRange {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/**
 * Parses a list of addresses and CIDR ranges separated by commas or white space
 * ("185.71.76.0/27, 77.75.156.11 2a02:5180::/32"). A bare address is a single host.
 * Returns the ranges, or the reason the list is refused.
 */
export function parseCidrList(text: string): { ranges: CidrRange[] } | { error: string } {
  const parts = text.split(/[\s,]+/).filter((p) => p.length > 0);
  if (parts.length === 0) return { error: 'must name at least one address or range' };
  if (parts.length > 256) return { error: 'must name at most 256 ranges' };
  const ranges: CidrRange[] = [];
  for (const part of parts) {
    const [address = '', prefixText, extra] = part.split('/');
    const v = isIP(address);
    if (v === 0 || extra !== undefined) return { error: `${part.slice(0, 60)} is not an IP address or CIDR range` };
    const max = v === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
    if (!(prefix >= 0 && prefix <= max)) return { error: `${part.slice(0, 60)} has a prefix outside 0..${max}` };
    ranges.push({ address, prefix, family: v === 4 ? 'ipv4' : 'ipv6' });
  }
  return { ranges };
}

/** The v4 address inside a v4-mapped v6 one (what a dual-stack socket reports), or the address itself. */
export function unmapIpv4(address: string): string {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return m?.[1] ?? address;
}

/** A matcher over parsed ranges, for v4 and v6; anything that is not an address does not match. */
export function cidrMatcher(ranges: readonly CidrRange[]): (address: string) => boolean {
  const list = new BlockList();
  for (const r of ranges) list.addSubnet(r.address, r.prefix, r.family);
  return (raw: string) => {
    if (typeof raw !== 'string' || raw.length > 64) return false;
    const address = unmapIpv4(raw.trim());
    const v = isIP(address);
    if (v === 0) return false;
    try {
      return list.check(address, v === 4 ? 'ipv4' : 'ipv6');
    } catch {
      return false;
    }
  };
}
