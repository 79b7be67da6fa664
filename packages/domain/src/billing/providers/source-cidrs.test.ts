import { describe, expect, it } from 'vitest';
import { cidrMatcher, parseCidrList } from './source-cidrs.ts';
import { checkSourceCidrs, YOOKASSA_SOURCE_CIDRS, yookassaSourceMatcher } from './yookassa-sources.ts';

const ranges = (text: string) => {
  const parsed = parseCidrList(text);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed.ranges;
};

describe('source address allow-lists (CIDR, v4 and v6)', () => {
  it('a v4 range holds exactly its addresses; a bare address is one host', () => {
    const inList = cidrMatcher(ranges('185.71.76.0/27, 77.75.156.11'));
    expect(inList('185.71.76.0')).toBe(true);
    expect(inList('185.71.76.31')).toBe(true);
    expect(inList('185.71.76.32')).toBe(false);
    expect(inList('77.75.156.11')).toBe(true);
    expect(inList('77.75.156.10')).toBe(false);
  });

  it('a v4-mapped v6 address (a dual-stack socket) is matched as the v4 address', () => {
    const inList = cidrMatcher(ranges('185.71.76.0/27'));
    expect(inList('::ffff:185.71.76.7')).toBe(true);
    expect(inList('::FFFF:185.71.77.7')).toBe(false);
  });

  it('v6 ranges match v6 addresses in any spelling', () => {
    const inList = cidrMatcher(ranges('2a02:5180::/32'));
    expect(inList('2a02:5180::1')).toBe(true);
    expect(inList('2A02:5180:FFFF:0:0:0:0:1')).toBe(true);
    expect(inList('2a02:5181::1')).toBe(false);
    expect(inList('185.71.76.7')).toBe(false);
  });

  it('anything that is not an address matches nothing', () => {
    const inList = cidrMatcher(ranges('0.0.0.0/0, ::/0'));
    for (const bad of ['', 'localhost', '1.2.3', '1.2.3.4.5', '::g', 'x'.repeat(100)]) expect(inList(bad)).toBe(false);
    expect(inList('8.8.8.8')).toBe(true);
  });

  it('lists are checked: addresses, prefixes in range, at least one entry', () => {
    expect(parseCidrList('10.0.0.0/33')).toMatchObject({ error: expect.stringContaining('prefix') });
    expect(parseCidrList('fd00::/129')).toMatchObject({ error: expect.stringContaining('prefix') });
    expect(parseCidrList('10.0.0.0/8/1')).toMatchObject({ error: expect.any(String) });
    expect(parseCidrList('example.com')).toMatchObject({ error: expect.any(String) });
    expect(parseCidrList(' , ')).toMatchObject({ error: expect.any(String) });
    expect(checkSourceCidrs('any')).toBeNull();
    expect(checkSourceCidrs(YOOKASSA_SOURCE_CIDRS)).toBeNull();
    expect(checkSourceCidrs('10.0.0.0/8 fd00::/8')).toBeNull();
  });

  it('the YooKassa default is the published list; "any" turns the check off', () => {
    expect(yookassaSourceMatcher(undefined)?.('77.75.154.200')).toBe(true);
    expect(yookassaSourceMatcher('')?.('77.75.154.100')).toBe(false);
    expect(yookassaSourceMatcher('any')).toBeNull();
  });
});
