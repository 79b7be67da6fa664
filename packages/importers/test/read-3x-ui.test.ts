import { randomUUID } from 'node:crypto';
import { type XuiInbound, xuiStore } from '@svc/testkit/xui-store';
import { describe, expect, it } from 'vitest';
import { ImportSourceError, read3xui } from '../src/index.ts';

// Issue 34 item 1 for 3x-ui: a subscriber is a subId across inbounds; credentials verbatim;
// bytes and milliseconds as 3x-ui stores them; "starts after first use" kept; both layouts of
// its clients (in the inbounds' JSON, and v3.1's tables) read alike.
const ids = { vless: randomUUID(), vmess: randomUUID(), other: randomUUID() };
const GB = 1024 ** 3;
const now = Date.now();

const inbounds = (): XuiInbound[] => [
  {
    tag: 'inbound-443',
    protocol: 'vless',
    port: 443,
    streamSettings: { network: 'tcp', security: 'reality' },
    clients: [
      {
        email: 'alice-phone',
        subId: 'alicesub0000001a',
        id: ids.vless,
        flow: 'xtls-rprx-vision',
        totalGB: 50 * GB,
        expiryTime: now + 30 * 86_400_000,
        reset: 30,
        up: 100,
        down: 900,
        comment: 'VIP',
      },
      { email: 'bob', subId: 'bobsub000000002b', id: ids.other, enable: false },
      { email: 'carol', subId: 'carolsub0000003c', id: randomUUID(), expiryTime: -7 * 86_400_000 },
    ],
  },
  {
    tag: 'inbound-8443',
    protocol: 'trojan',
    port: 8443,
    clients: [
      {
        email: 'alice-laptop',
        subId: 'alicesub0000001a',
        password: 'alice-trojan',
        totalGB: 50 * GB,
        expiryTime: now + 30 * 86_400_000,
        reset: 30,
        up: 50,
        down: 50,
      },
    ],
  },
  { tag: 'inbound-9000', protocol: 'vmess', port: 9000, enable: false, clients: [{ email: 'dave', id: ids.vmess }] },
  { tag: 'inbound-51820', protocol: 'wireguard', port: 51820, clients: [] },
];

describe('reading a 3x-ui store', () => {
  for (const clientTables of [false, true])
    it(`one subscriber per subId across inbounds, credentials verbatim, usage summed (${clientTables ? 'v3.1 client tables' : "clients in the inbounds' JSON"})`, async () => {
      const batch = await read3xui({ database: await xuiStore({ inbounds: inbounds(), clientTables }) });
      expect(batch).toMatchObject({ source: '3x-ui', linkSecret: null });
      expect(batch.inbounds.map((i) => [i.tag, i.protocol, i.port])).toEqual([
        ['inbound-443', 'vless', 443],
        ['inbound-8443', 'trojan', 8443],
        ['inbound-9000', 'vmess', 9000],
      ]);
      expect(batch.notCarried).toContainEqual({ what: 'inbound inbound-51820', why: 'protocol wireguard is not served here' });
      const alice = batch.users.find((u) => u.linkKey === 'alicesub0000001a');
      expect(alice).toMatchObject({
        key: 'sub:alicesub0000001a',
        status: 'active',
        usedBytes: 1_100,
        trafficLimitBytes: 50 * GB,
        renewal: 'month',
        credentials: { vless: { uuid: ids.vless, flow: 'xtls-rprx-vision' }, trojan: { password: 'alice-trojan' } },
        inboundTags: ['inbound-443', 'inbound-8443'],
        note: 'VIP',
        onHold: null,
      });
      expect(batch.users.find((u) => u.linkKey === 'bobsub000000002b')?.status).toBe('disabled');
      expect(batch.users.find((u) => u.linkKey === 'carolsub0000003c')).toMatchObject({
        status: 'on_hold',
        expiresAt: null,
        onHold: { durationSeconds: 7 * 86_400, startsBy: null },
      });
      // A client without a subId is a subscriber of its own, by email; a disabled inbound serves nobody.
      expect(batch.users.find((u) => u.key === 'email:dave')).toMatchObject({
        linkKey: null,
        credentials: { vmess: { uuid: ids.vmess } },
        inboundTags: [],
      });
    });

  it('two different ids of one protocol for one subscriber: the first kept, the other reported', async () => {
    const batch = await read3xui({
      database: await xuiStore({
        inbounds: [
          { tag: 'a', protocol: 'vless', port: 1, clients: [{ email: 'e1', subId: 'same', id: randomUUID() }] },
          { tag: 'b', protocol: 'vless', port: 2, clients: [{ email: 'e2', subId: 'same', id: randomUUID() }] },
        ],
      }),
    });
    expect(batch.users).toHaveLength(1);
    expect(batch.notCarried.some((n) => n.what === 'user same: e2 on b' && /second vless id/.test(n.why))).toBe(true);
  });

  it('a file without the inbounds table is refused', async () => {
    const { marzbanStore } = await import('@svc/testkit/marzban-store');
    await expect(read3xui({ database: await marzbanStore({ secret: 's', users: [] }) })).rejects.toBeInstanceOf(ImportSourceError);
  });
});
