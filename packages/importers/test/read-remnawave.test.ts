import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { createScratchDatabase, testDatabaseUrl } from '@svc/testkit';
import { marzneshinSqlite } from '@svc/testkit/marzneshin-store';
import { type RemnawaveLayout, type RemnawaveStoreSpec, remnawaveStatements } from '@svc/testkit/remnawave-store';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ImportSourceError, postgresStore, postgresStoreOf, readRemnawave, type SourceStore, sqliteStore } from '../src/index.ts';

// Issue 34 item 1 for Remnawave: users with the credentials on their row verbatim (a 2022
// Shadowsocks key as its nodes serve it), traffic from user_traffic, squads to the config
// profile's inbounds (Xray JSON), in its 3.x layout (users.id) and its 2.3 layout (users.t_id).
const ids = { alice: randomUUID(), bob: randomUUID() };
const spec = (layout: RemnawaveLayout): RemnawaveStoreSpec => ({
  layout,
  squads: { Default: ['VLESS Reality', 'SS'], Trojan: ['Trojan WS'] },
  inbounds: [
    {
      tag: 'VLESS Reality',
      raw: {
        protocol: 'vless',
        port: 443,
        settings: { clients: [], decryption: 'none' },
        streamSettings: {
          network: 'tcp',
          security: 'reality',
          realitySettings: { privateKey: 'x', serverNames: ['example.com'], shortIds: [''] },
        },
      },
    },
    { tag: 'Trojan WS', raw: { protocol: 'trojan', port: 8443, streamSettings: { network: 'ws', wsSettings: { path: '/tr' } } } },
    { tag: 'SS', raw: { protocol: 'shadowsocks', port: 8388, settings: { method: 'chacha20-ietf-poly1305', clients: [] } } },
    { tag: 'HY', raw: { protocol: 'hysteria', port: 4443 } },
  ],
  users: [
    {
      username: 'alice',
      shortUuid: 'Ab3_xYz-0123456789',
      trafficLimitBytes: 50_000,
      strategy: 'MONTH_ROLLING',
      expireAt: '2099-05-06 07:08:09.000',
      vlessUuid: ids.alice,
      trojanPassword: 'alice-trojan-password-32-chars-x',
      ssPassword: 'alice-ss-password-32-characters-',
      usedBytes: 1_234,
      lifetimeBytes: 9_999,
      description: 'VIP',
      email: 'alice@example.org',
      hwidDeviceLimit: 3,
      squads: ['Default'],
    },
    {
      username: 'Bob',
      shortUuid: 'bobShortUuid000001',
      status: 'DISABLED',
      expireAt: '2099-01-01 00:00:00.000',
      vlessUuid: ids.bob,
      trojanPassword: 'bob-trojan',
      ssPassword: 'bob-ss',
      squads: ['Trojan'],
    },
  ],
});

let pglite: PGlite | undefined;
let schemas = 0;
/** One PGlite for the file (it is slow to start), a schema per store. */
const pgliteStore = async (s: RemnawaveStoreSpec): Promise<SourceStore> => {
  pglite ??= new PGlite();
  const db = pglite;
  const schema = `rw${++schemas}`;
  await db.exec(`create schema ${schema}; set search_path to ${schema}`);
  for (const statement of remnawaveStatements(s)) await db.exec(statement);
  return postgresStoreOf(
    (sql) => db.query(sql, [], { parsers: { 1114: (v: string) => v } }) as never,
    'the Remnawave database',
    async () => {},
  );
};
let scratches = 0;
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
  await pglite?.close();
});
const stores: Array<[string, (s: RemnawaveStoreSpec) => Promise<SourceStore>]> = [['PGlite', pgliteStore]];
if (testDatabaseUrl())
  stores.push([
    'PostgreSQL (server, through a URL)',
    async (s) => {
      const scratch = await createScratchDatabase(`import_remnawave_${++scratches}`);
      cleanups.push(() => scratch.drop());
      const c = new pg.Client({ connectionString: scratch.url });
      await c.connect();
      for (const statement of remnawaveStatements(s)) await c.query(statement);
      await c.end();
      const store = await postgresStore(scratch.url, 'the Remnawave database');
      cleanups.unshift(() => store.close());
      return store;
    },
  ]);

describe.each(stores)('readRemnawave from %s', (_, open) => {
  it.each(['3.x', '2.3'] as const)('layout %s: credentials verbatim, traffic, squads to inbounds, terms, state', async (layout) => {
    const batch = await readRemnawave({ store: await open(spec(layout)) });
    expect(batch.source).toBe('remnawave');
    expect(batch.sourceVersion).toMatch(layout === '3.x' ? /drop_user_uuid$/ : /change_uuid_to_id/);
    const [alice, bob] = batch.users;
    expect(alice).toMatchObject({
      key: 'alice',
      linkKey: 'Ab3_xYz-0123456789',
      email: 'alice@example.org',
      status: 'active',
      usedBytes: 1_234,
      lifetimeUsedBytes: 9_999,
      trafficLimitBytes: 50_000,
      renewal: 'month',
      expiresAt: new Date('2099-05-06T07:08:09Z'),
      credentials: {
        vless: { uuid: ids.alice, flow: 'xtls-rprx-vision' },
        trojan: { password: 'alice-trojan-password-32-chars-x' },
        shadowsocks: { password: 'alice-ss-password-32-characters-', method: 'chacha20-ietf-poly1305' },
      },
      inboundTags: ['SS', 'VLESS Reality'],
      createdAt: new Date('2025-03-04T05:06:07.890Z'),
    });
    expect(alice?.note).toContain('VIP');
    expect(bob).toMatchObject({ key: 'bob', username: 'Bob', status: 'disabled', trafficLimitBytes: null, inboundTags: ['Trojan WS'] });
    expect(batch.inbounds.map((i) => [i.tag, i.protocol, i.port])).toEqual([
      ['SS', 'shadowsocks', 8388],
      ['Trojan WS', 'trojan', 8443],
      ['VLESS Reality', 'vless', 443],
    ]);
    expect(batch.notCarried).toEqual([
      { what: 'inbound HY', why: 'protocol hysteria is not served here' },
      { what: '1 users: device limit', why: 'HWID device limits are not enforced here yet: imported without them' },
    ]);
  });

  it('a 2022 Shadowsocks inbound: the key is the password’s bytes in base64, and the inbound keeps its server key', async () => {
    const s = spec('3.x');
    s.inbounds = [
      {
        tag: 'SS22',
        raw: { protocol: 'shadowsocks', port: 8389, settings: { method: '2022-blake3-aes-256-gcm', password: 'c2VydmVyLWtleQ==' } },
      },
    ];
    s.squads = { Default: ['SS22'] };
    s.users = s.users.slice(0, 1);
    const batch = await readRemnawave({ store: await open(s) });
    expect(batch.users[0]?.credentials.shadowsocks).toEqual({
      password: Buffer.from('alice-ss-password-32-characters-').toString('base64'),
      method: '2022-blake3-aes-256-gcm',
    });
    expect(batch.inbounds[0]).toMatchObject({ shadowsocksMethod: '2022-blake3-aes-256-gcm', shadowsocksServerKey: 'c2VydmVyLWtleQ==' });
  });
});

describe('readRemnawave refuses', () => {
  it('an SQLite file (Remnawave lives in PostgreSQL), and a database of another panel', async () => {
    const sqlite = await sqliteStore(await marzneshinSqlite({ services: {}, inbounds: [], users: [] }), 'the file');
    await expect(readRemnawave({ store: sqlite })).rejects.toThrow('give its database URL');
    const other = await pgliteStore({ layout: '3.x', squads: {}, inbounds: [], users: [] });
    const foreign: SourceStore = { ...other, columns: (t) => (t === 'users' ? new Set(['id', 'username']) : other.columns(t)) };
    await expect(readRemnawave({ store: foreign })).rejects.toThrow(ImportSourceError);
    await expect(readRemnawave({ store: foreign })).rejects.toThrow(/lacks short_uuid.*not a Remnawave/);
  });
});
