import { randomBytes, randomUUID } from 'node:crypto';
import { MARZBAN_XRAY_CONFIG, marzbanStore } from '@svc/testkit/marzban-store';
import { describe, expect, it } from 'vitest';
import { ImportSourceError, readMarzban } from '../src/index.ts';

// Issue 34 item 1 for Marzban: its store read as it is, credentials verbatim, states and limits
// as Marzban means them, its inbounds from xray_config.json; a corrupt or foreign file refused.
const SECRET = randomBytes(32).toString('hex');
const ids = { vless: randomUUID(), vmess: randomUUID(), vmess2: randomUUID() };

const store = () =>
  marzbanStore({
    secret: SECRET,
    users: [
      {
        username: 'Alice',
        used_traffic: 5_000,
        data_limit: 50_000_000_000,
        data_limit_reset_strategy: 'month',
        expire: 1_900_000_000,
        note: 'VIP',
        sub_revoked_at: '2025-03-01 12:00:00.5',
        resets: [1_000, 2_000],
        proxies: [
          { type: 'VLESS', settings: { id: ids.vless, flow: 'xtls-rprx-vision' } },
          { type: 'VMess', settings: { id: ids.vmess }, excluded: ['VMess TCP'] },
          { type: 'Trojan', settings: { password: 'tr0jan-password-of-alice', flow: '' } },
          { type: 'Shadowsocks', settings: { password: 'ss-password-of-alice', method: 'aes-256-gcm' } },
        ],
      },
      { username: 'bob', status: 'disabled', data_limit: 0, expire: 0, proxies: [{ type: 'VMess', settings: { id: ids.vmess2 } }] },
      { username: 'carol', status: 'limited', data_limit: 10, used_traffic: 10, data_limit_reset_strategy: 'year' },
      { username: 'dave', status: 'expired', expire: 1_600_000_000 },
      { username: 'erin', status: 'on_hold', on_hold_expire_duration: 2_592_000, on_hold_timeout: '2027-01-01 00:00:00' },
      {
        username: 'frank',
        proxies: [
          { type: 'VLESS', settings: { id: 'not-a-uuid' } },
          { type: 'Trojan', settings: '{broken' },
        ],
      },
    ],
  });

describe('reading a Marzban store', () => {
  it('carries every user with credentials verbatim, limits, renewal, expiry, usage, notes and link revocation', async () => {
    const batch = await readMarzban({ database: await store(), xrayConfig: MARZBAN_XRAY_CONFIG });
    expect(batch).toMatchObject({ source: 'marzban', sourceVersion: '2b231de97dc3', linkSecret: SECRET });
    const alice = batch.users.find((u) => u.username === 'Alice');
    expect(alice).toEqual({
      key: 'alice',
      username: 'Alice',
      linkKey: null,
      email: null,
      status: 'active',
      usedBytes: 5_000,
      lifetimeUsedBytes: 8_000,
      trafficLimitBytes: 50_000_000_000,
      renewal: 'month',
      expiresAt: new Date(1_900_000_000_000),
      onHold: null,
      credentials: {
        vless: { uuid: ids.vless, flow: 'xtls-rprx-vision' },
        vmess: { uuid: ids.vmess },
        trojan: { password: 'tr0jan-password-of-alice' },
        shadowsocks: { password: 'ss-password-of-alice', method: 'aes-256-gcm' },
      },
      // Every inbound of each protocol the user has, but the VMess one excluded for them.
      inboundTags: ['Shadowsocks TCP', 'Trojan TCP', 'VLESS TCP', 'VMess WS'],
      note: 'VIP',
      createdAt: new Date('2025-01-01T10:00:00.123Z'),
      linksRevokedAt: new Date('2025-03-01T12:00:00.500Z'),
    });
  });

  it('keeps each state: disabled, limited, expired, and on hold as a term that starts on first use', async () => {
    const batch = await readMarzban({ database: await store(), xrayConfig: MARZBAN_XRAY_CONFIG });
    const by = (name: string) => batch.users.find((u) => u.username === name);
    expect(by('bob')).toMatchObject({
      status: 'disabled',
      trafficLimitBytes: null,
      expiresAt: null,
      inboundTags: ['VMess TCP', 'VMess WS'],
    });
    expect(by('carol')).toMatchObject({ status: 'limited', trafficLimitBytes: 10, usedBytes: 10, renewal: 'year' });
    expect(by('dave')).toMatchObject({ status: 'expired', expiresAt: new Date(1_600_000_000_000) });
    expect(by('erin')).toMatchObject({
      status: 'on_hold',
      expiresAt: null,
      onHold: { durationSeconds: 2_592_000, startsBy: new Date('2027-01-01T00:00:00Z') },
    });
  });

  it('says what it cannot carry, with why: a credential that is not usable, a config inbound without a tag', async () => {
    const batch = await readMarzban({ database: await store(), xrayConfig: MARZBAN_XRAY_CONFIG });
    const frank = batch.users.find((u) => u.username === 'frank');
    expect(frank?.credentials).toEqual({});
    expect(batch.notCarried).toEqual(
      expect.arrayContaining([
        { what: 'user frank: VLESS', why: 'its id is not a UUID ("not-a-uuid")' },
        { what: 'user frank: Trojan', why: 'its settings are not a JSON object' },
      ]),
    );
    expect(batch.inbounds.map((i) => [i.tag, i.protocol, i.port])).toEqual([
      ['VLESS TCP', 'vless', 8443],
      ['VMess WS', 'vmess', 8080],
      ['VMess TCP', 'vmess', 8081],
      ['Trojan TCP', 'trojan', 8444],
      ['Shadowsocks TCP', 'shadowsocks', 1080],
    ]);
  });

  it('without xray_config.json the users come without inbounds, and the report says so', async () => {
    const batch = await readMarzban({ database: await store() });
    expect(batch.inbounds).toEqual([]);
    expect(batch.users.every((u) => u.inboundTags.length === 0)).toBe(true);
    expect(batch.notCarried).toContainEqual({
      what: 'inbounds',
      why: 'no xray_config.json given: the users are imported without inbounds',
    });
  });

  it('refuses a corrupt file, a file that is not SQLite, a foreign SQLite file and a config that is not Xray JSON, each with a clear error', async () => {
    const good = await store();
    const corrupt = good.slice();
    corrupt.fill(0x5a, 100, 4096);
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => new Error('read'),
        (err: Error) => err,
      );
    for (const [database, pattern] of [
      [new Uint8Array(randomBytes(8192)), /not an SQLite database/],
      [Buffer.from('{"users": []}'), /not an SQLite database/],
      [corrupt, /damaged|could not be read|not a Marzban/],
    ] as const) {
      const err = await refusal(readMarzban({ database }));
      expect(err).toBeInstanceOf(ImportSourceError);
      expect((err as Error).message).toMatch(pattern);
    }
    const foreign = await (await import('@svc/testkit/marzban-store')).marzbanStore({ secret: SECRET, users: [] });
    const other = await refusal(readMarzban({ database: await withoutTable(foreign, 'proxies') }));
    expect((other as Error).message).toBe('the file has no table "proxies": not a Marzban database');
    expect(((await refusal(readMarzban({ database: good, xrayConfig: '{"outbounds": []}' }))) as Error).message).toMatch(
      /no "inbounds" list/,
    );
    expect(((await refusal(readMarzban({ database: good, xrayConfig: 'not json' }))) as Error).message).toMatch(/not JSON/);
  });
});

async function withoutTable(bytes: Uint8Array, table: string): Promise<Uint8Array> {
  const SQL = await (await import('sql.js')).default();
  const db = new SQL.Database(bytes);
  db.run(`drop table ${table}`);
  const out = db.export();
  db.close();
  return out;
}
