import { describe, expect, it } from 'vitest';
import { parseAccessLine } from '../../src/connections/access-log.ts';
import { LiveConnections } from '../../src/connections/live-connections.ts';
import { parseSsLines } from '../../src/connections/socket-table.ts';

describe('live connections: the socket table joined with the access log', () => {
  it('ss lines are read by splitting on spaces: IPv4, IPv4-mapped and IPv6 peers, a zone, junk skipped', () => {
    const text = [
      '0      0          127.0.0.1:443        127.0.0.2:51000',
      '0      0      [::ffff:127.0.0.1]:443 [::ffff:127.0.0.3]:51001',
      '0      0      [2001:db8::10]:8443    [2001:db8:1:2::9]:51002 users:(("xray",pid=1,fd=9))',
      '0      0      [fe80::1]%eth0:443     [fe80::2%eth0]:51003',
      'garbage',
      '',
      `0 0 ${'a:'.repeat(50_000)}1 b`,
    ].join('\n');
    expect(parseSsLines(text)).toEqual([
      { host: '127.0.0.2', port: 51000, localPort: 443 },
      { host: '::ffff:127.0.0.3', port: 51001, localPort: 443 },
      { host: '2001:db8:1:2::9', port: 51002, localPort: 8443 },
      { host: 'fe80::2', port: 51003, localPort: 443 },
    ]);
  });

  it('with -i, how long each client has been silent: the lesser of lastrcv and lastack', () => {
    const text = [
      '0      0      127.0.0.1:443 127.0.0.2:51000',
      '\t bbr wscale:10,10 rto:204 bytes_received:162103 lastsnd:7648 lastrcv:16000 lastack:4 pacing_rate 1bps',
      '0      0      127.0.0.1:443 127.0.0.3:51001',
      '\t cubic lastsnd:1 lastrcv:30000 lastack:25000',
      '0      0      127.0.0.1:443 127.0.0.4:51002',
    ].join('\n');
    expect(parseSsLines(text).map((s) => s.quietMs)).toEqual([4, 25000, undefined]);
  });

  it('each live socket gets the user its access line named, in any spelling of the address; the rest are unattributed', () => {
    let now = 0;
    const live = new LiveConnections({ ports: () => [443], now: () => now });
    const seen: string[] = [];
    live.onAccess((c) => seen.push(`${c.email} ${c.device}`));
    live.seen(parseAccessLine('2026/11/29 19:00:00 127.0.0.2:51000 accepted tcp:example.com:443 email: a@svc'));
    live.seen(parseAccessLine('2026/11/29 19:00:00 from tcp:127.0.0.3:51001 accepted tcp:example.com:443 [in -> out] email: b@svc'));
    live.seen(parseAccessLine('2026/11/29 19:00:00 from tcp:[2001:db8:1:2::9]:51002 accepted tcp:x:80 email: a@svc'));
    live.seen(parseAccessLine('not an access line'));
    expect(seen).toEqual(['a@svc 127.0.0.2', 'b@svc 127.0.0.3', 'a@svc 2001:db8:1:2::/64']);
    const snap = live.join([
      { host: '127.0.0.2', port: 51000, localPort: 443 },
      { host: '::ffff:127.0.0.3', port: 51001, localPort: 443 },
      { host: '2001:db8:1:2:0:0:0:9', port: 51002, localPort: 443 },
      { host: '127.0.0.9', port: 1, localPort: 443 },
    ]);
    expect(snap.unattributed).toBe(1);
    expect(snap.byUser.get('a@svc')?.map((c) => [c.host, c.port, c.device])).toEqual([
      ['127.0.0.2', 51000, '127.0.0.2'],
      ['2001:db8:1:2:0:0:0:9', 51002, '2001:db8:1:2::/64'],
    ]);
    expect(snap.byUser.get('b@svc')?.map((c) => c.device)).toEqual(['127.0.0.3']);
    // Entries of ended sockets are forgotten after keepMs; live ones are kept however old.
    now = 60_000;
    live.join([{ host: '127.0.0.2', port: 51000, localPort: 443 }]);
    expect(live.entries).toBe(1);
  });
});
