import type { AgentMessage } from '@svc/proto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseAccessLine } from '../../src/connections/access-log.ts';
import { LiveConnections } from '../../src/connections/live-connections.ts';
import type { Socket } from '../../src/connections/socket-table.ts';
import { DeviceEnforcer } from '../../src/devices/device-enforcer.ts';

/**
 * The enforcer around the tracker, with the socket table and ss -K handed in: what is ended (by
 * exact tuple, that user's only), when the DeviceReport goes out, what the status says.
 */
const limits = (id: string, deviceLimit: number) => ({
  subscriptionId: id,
  deviceLimit,
  uploadBps: 0n,
  downloadBps: 0n,
  notAfterMs: 0n,
  sliceId: 0n,
  sliceBytes: 0n,
});

function rig(opts: { missing?: string | null; engine?: () => Promise<Map<string, Map<string, number>> | null> } = {}) {
  let now = 1_000_000;
  let table: Socket[] = [];
  const sent: AgentMessage[] = [];
  const ended: Socket[] = [];
  const live = new LiveConnections({ ports: () => [443], sockets: async () => table, now: () => now });
  const enforcer = new DeviceEnforcer({
    live,
    ports: () => [443],
    send: (m) => {
      sent.push(m);
      return true;
    },
    log: pino({ level: 'silent' }),
    graceMs: 20_000,
    reportEveryMs: 5000,
    everyMs: 3_600_000,
    destroy: async (s) => {
      ended.push(...s);
      table = table.filter((t) => !s.some((x) => x.host === t.host && x.port === t.port));
      return s.length;
    },
    missing: async () => opts.missing ?? null,
    now: () => now,
    ...(opts.engine ? { engineAddresses: opts.engine } : {}),
  });
  const connect = (host: string, port: number, email: string) => {
    table.push({ host, port, localPort: 443 });
    live.seen(parseAccessLine(`2026/11/29 19:00:00 from tcp:${host}:${port} accepted tcp:example.com:443 [in -> out] email: ${email}`));
  };
  return {
    enforcer,
    sent,
    ended,
    connect,
    advance: (ms: number) => {
      now += ms;
    },
    reports: () => sent.filter((m) => m.devices).map((m) => m.devices?.users),
  };
}

describe('device enforcer', () => {
  it('after the grace only the extra device’s connections of that user end, by exact tuple; a new one from it ends on sight', async () => {
    const r = rig();
    await r.enforcer.start();
    r.enforcer.setLimits([limits('a', 1)]);
    r.connect('198.51.100.1', 1000, 'a@svc');
    r.connect('203.0.113.9', 2000, 'a@svc');
    r.connect('203.0.113.9', 2001, 'b@svc');
    await r.enforcer.pass();
    r.advance(20_000);
    await r.enforcer.pass();
    expect(r.ended).toEqual([{ host: '203.0.113.9', port: 2000, localPort: 443 }]);
    // A new connection of a from the refused address: ended at once (localPort from the ports).
    r.connect('203.0.113.9', 2002, 'a@svc');
    await new Promise((res) => setImmediate(res));
    await new Promise((res) => setImmediate(res));
    expect(r.ended.at(-1)).toEqual({ host: '203.0.113.9', port: 2002, localPort: 0 });
    // b on that address: never.
    r.connect('203.0.113.9', 2003, 'b@svc');
    await new Promise((res) => setImmediate(res));
    expect(r.ended.some((s) => s.port === 2001 || s.port === 2003)).toBe(false);
    r.enforcer.stop();
  });

  it('the DeviceReport goes out when the picture changes, at most every 5 s, and whole again on every new stream', async () => {
    const r = rig();
    await r.enforcer.start();
    r.connect('198.51.100.1', 1000, 'a@svc');
    await r.enforcer.pass();
    expect(r.reports()).toEqual([[{ subscriptionId: 'a', addresses: ['198.51.100.1'] }]]);
    // A change 1 s later waits for the 5 s; unchanged passes send nothing.
    r.advance(1000);
    r.connect('2001:db8:1:2::7', 1001, 'b@svc');
    await r.enforcer.pass();
    expect(r.reports()).toHaveLength(1);
    r.advance(4000);
    await new Promise((res) => setTimeout(res, 4100));
    expect(r.reports()).toHaveLength(2);
    expect(r.reports()[1]).toEqual([
      { subscriptionId: 'a', addresses: ['198.51.100.1'] },
      { subscriptionId: 'b', addresses: ['2001:db8:1:2::/64'] },
    ]);
    await r.enforcer.pass();
    expect(r.reports()).toHaveLength(2);
    r.enforcer.opened();
    expect(r.reports()).toHaveLength(3);
    r.enforcer.stop();
  }, 15_000);

  it('the status says whether device limits are enforced here, and why not', async () => {
    const ok = rig();
    await ok.enforcer.start();
    expect(ok.enforcer.enforcement()).toEqual({ deviceLimits: true, deviceLimitsError: '', deviceSource: 'access-log' });
    ok.enforcer.stop();
    const no = rig({ missing: 'the agent lacks CAP_NET_ADMIN: it cannot end sockets (ss -K)' });
    await no.enforcer.start();
    expect(no.enforcer.enforcement()).toEqual({
      deviceLimits: false,
      deviceLimitsError: 'the agent lacks CAP_NET_ADMIN: it cannot end sockets (ss -K)',
      deviceSource: 'access-log',
    });
    no.enforcer.stop();
  });

  it('where the engine counts online addresses (Xray), devices it lists and the socket table does not (a UDP transport) take their places: a user limited to 2 with two such devices has a third, over TCP, refused and ended by tuple; device_source says engine-online-ips', async () => {
    let online: Map<string, Map<string, number>> | null = new Map([
      [
        'a@svc',
        new Map([
          ['[2001:db8:5:6::9]', 1_000_000],
          ['198.51.100.7', 1_000_000],
        ]),
      ],
      ['b@svc', new Map([['192.0.2.50', 1_000_000]])],
    ]);
    const r = rig({ engine: async () => online });
    await r.enforcer.start();
    r.enforcer.setLimits([limits('a', 2)]);
    await r.enforcer.pass();
    expect(r.enforcer.enforcement()).toEqual({ deviceLimits: true, deviceLimitsError: '', deviceSource: 'engine-online-ips' });
    // Reported (IPv6 folded to its /64) for the fleet-wide count.
    expect(r.reports()[0]).toEqual([
      { subscriptionId: 'a', addresses: ['2001:db8:5:6::/64', '198.51.100.7'] },
      { subscriptionId: 'b', addresses: ['192.0.2.50'] },
    ]);
    r.advance(1000);
    r.connect('203.0.113.9', 2000, 'a@svc');
    r.connect('203.0.113.9', 2001, 'b@svc');
    await r.enforcer.pass();
    expect(r.ended).toEqual([]);
    r.advance(20_000);
    await r.enforcer.pass();
    expect(r.ended).toEqual([{ host: '203.0.113.9', port: 2000, localPort: 443 }]);
    // An engine that has no such statistics: the access log alone, and it says so.
    online = null;
    await r.enforcer.pass();
    expect(r.enforcer.enforcement().deviceSource).toBe('access-log');
    r.enforcer.stop();
  });

  it('an engine that lists no online addresses (v2ray 4, older Xray) is asked again only after 10 minutes; an engine error skips it for one pass', async () => {
    let calls = 0;
    let answer: 'none' | 'error' = 'error';
    const r = rig({
      engine: async () => {
        calls++;
        if (answer === 'error') throw new Error('unavailable');
        return null;
      },
    });
    await r.enforcer.start();
    await r.enforcer.pass();
    await r.enforcer.pass();
    expect(calls).toBe(2);
    answer = 'none';
    await r.enforcer.pass();
    await r.enforcer.pass();
    r.advance(599_000);
    await r.enforcer.pass();
    expect(calls).toBe(3);
    r.advance(1_000);
    await r.enforcer.pass();
    expect(calls).toBe(4);
    expect(r.enforcer.enforcement().deviceSource).toBe('access-log');
    r.enforcer.stop();
  });
});
