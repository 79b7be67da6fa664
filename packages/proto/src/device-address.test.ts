import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { canonicalHost, deviceAddress } from './index.ts';

describe('device address: IPv4 as it is, IPv4-mapped IPv6 as IPv4, IPv6 folded to its /64', () => {
  it('an IPv4 address is its own device', () => {
    expect(deviceAddress('198.51.100.7')).toBe('198.51.100.7');
    expect(deviceAddress('127.0.0.2')).toBe('127.0.0.2');
    expect(deviceAddress('0.0.0.0')).toBe('0.0.0.0');
  });

  it('an IPv4-mapped IPv6 address (a dual-stack socket’s IPv4 client) is the IPv4 device, in either spelling', () => {
    expect(deviceAddress('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(deviceAddress('[::ffff:127.0.0.2]')).toBe('127.0.0.2');
    expect(deviceAddress('::FFFF:c633:6407')).toBe('198.51.100.7');
    expect(deviceAddress('0:0:0:0:0:ffff:198.51.100.7')).toBe('198.51.100.7');
  });

  it('every address of one /64 is one device, written as four groups and ::/64', () => {
    expect(deviceAddress('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(deviceAddress('2001:0DB8:0001:0002:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(deviceAddress('[2001:db8:1:2:ffff::9]')).toBe('2001:db8:1:2::/64');
    expect(deviceAddress('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(deviceAddress('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(deviceAddress('::1')).toBe('0:0:0:0::/64');
    // Another /64 of the same /48 is another device.
    expect(deviceAddress('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
  });

  it('anything else is no device (null), whatever its length', () => {
    for (const bad of [
      '',
      'example.com',
      '1.2.3',
      '1.2.3.4.5',
      '256.1.1.1',
      '01.2.3.4',
      '1.2.3.-4',
      '2001:db8::1::2',
      '2001:db8:1:2:3:4:5:6:7',
      '2001:db8:1:2:3:4:5',
      'g::1',
      '12345::1',
      ':::',
      '[]',
      '::ffff:1.2.3.256',
      `${'1:'.repeat(5000)}1`,
      '1'.repeat(100_000),
    ])
      expect(deviceAddress(bad), bad.slice(0, 40)).toBeNull();
  });

  it('agrees with node:net on what is an address (random inputs of address characters)', () => {
    const alphabet = '0123456789abcdefABCDEF:.';
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let k = 0; k < 20_000; k++) {
      let s = '';
      const len = 1 + rnd(20);
      for (let i = 0; i < len; i++) s += alphabet[rnd(alphabet.length)];
      const ours = deviceAddress(s) !== null;
      expect(ours, s).toBe(isIP(s) !== 0);
    }
  });

  it('canonicalHost: one spelling of a host for both the access log and the socket table', () => {
    expect(canonicalHost('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(canonicalHost('127.0.0.2')).toBe('127.0.0.2');
    expect(canonicalHost('2001:DB8::1')).toBe('2001:db8:0:0:0:0:0:1');
    expect(canonicalHost('[2001:db8:0:0:0:0:0:1]')).toBe('2001:db8:0:0:0:0:0:1');
    expect(canonicalHost('nope')).toBeNull();
  });
});
