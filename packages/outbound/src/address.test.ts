import { describe, expect, it } from 'vitest';
import { type AddressClass, classifyAddress, ipLiteral } from './address.ts';
import { allowedClass } from './resolve.ts';

describe('every spelling of an address is read as the address it is', () => {
  it.each([
    ['169.254.169.254', '169.254.169.254'],
    ['2852039166', '169.254.169.254'],
    ['0xa9fea9fe', '169.254.169.254'],
    ['0XA9FEA9FE', '169.254.169.254'],
    ['0251.0376.0251.0376', '169.254.169.254'],
    ['0xa9.0xfe.0xa9.0xfe', '169.254.169.254'],
    ['169.254.43518', '169.254.169.254'],
    ['169.16689662', '169.254.169.254'],
    ['0x7f.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['0x', '0.0.0.0'],
    ['[::ffff:169.254.169.254]', '::ffff:a9fe:a9fe'],
    ['::ffff:a9fe:a9fe', '::ffff:a9fe:a9fe'],
    ['[::1]', '::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['FD00:EC2::254', 'fd00:ec2::254'],
  ])('%s is %s', (spelling, canonical) => {
    expect(ipLiteral(spelling)).toBe(canonical);
  });

  it.each([
    'example.com',
    'localhost',
    '1.2.3.4.example',
    '256.1.1.1',
    '1.2.3.4.5',
    '0x1ffffffff',
    '08.1.1.1',
    '',
    'a:b',
  ])('%s is no address literal (a name to resolve, or nothing)', (host) => {
    expect(ipLiteral(host)).toBeNull();
  });
});

describe('the class of an address decides whether the server may connect to it', () => {
  const cases: Array<[string, AddressClass]> = [
    // Cloud metadata and link-local, in every spelling.
    ['169.254.169.254', 'link-local'],
    ['2852039166', 'link-local'],
    ['0xa9fea9fe', 'link-local'],
    ['0251.0376.0251.0376', 'link-local'],
    ['[::ffff:169.254.169.254]', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::169.254.169.254', 'link-local'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['169.254.170.2', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['::ffff:100.100.100.200', 'metadata'],
    // Nowhere, everywhere, nothing.
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['2001:0:4136:e378::1', 'reserved'],
    // Loopback and private: the owner's setting decides.
    ['127.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['0x7f.0.0.1', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:10.1.2.3', 'private'],
    ['198.18.0.1', 'private'],
    // The internet.
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['169.253.255.255', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['2002:0808:0808::1', 'public'],
  ];
  it.each(cases)('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });

  it('link-local, metadata, unspecified, multicast, broadcast and reserved are refused whatever the setting; loopback and private only without it', () => {
    for (const [address, cls] of cases) {
      const never = !['public', 'loopback', 'private'].includes(cls);
      expect(allowedClass(classifyAddress(address), { allowPrivateNetworks: true }), address).toBe(!never);
      expect(allowedClass(classifyAddress(address), { allowPrivateNetworks: false }), address).toBe(cls === 'public');
    }
  });
});
