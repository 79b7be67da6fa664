import { PGlite } from '@electric-sql/pglite';
import { createScratchDatabase, testDatabaseUrl } from '@svc/testkit';
import { type MarzneshinStoreSpec, marzneshinSqlite, marzneshinStatements } from '@svc/testkit/marzneshin-store';

import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ImportSourceError, postgresStore, postgresStoreOf, readMarzneshin, type SourceStore, sqliteStore } from '../src/index.ts';
import { marzneshinCredentials } from '../src/marzneshin/marzneshin-credentials.ts';

// Issue 34 item 1 for Marzneshin: credentials are derived from each user's key exactly as its
// nodes derive them (XXH3-128: checked against the reference vectors), read from its SQLite file
// and from PostgreSQL alike (enum members by name, naive UTC times); services give the inbound
// tags; start-on-first-use kept; removed users left out.
const KEYS = {
  alice: '0123456789abcdef0123456789abcdef',
  bob: '5f1e4b8c2a9d4e7f8a6b3c2d1e0f9a8b',
  carol: 'c0ffee00c0ffee00c0ffee00c0ffee00',
  gone: 'deadbeefdeadbeefdeadbeefdeadbeef',
};
const SPEC: MarzneshinStoreSpec = {
  services: { main: ['VLESS TCP REALITY', 'VMess WS'], trojan: ['Trojan TCP'] },
  inbounds: [
    {
      tag: 'VLESS TCP REALITY',
      config: { protocol: 'vless', port: 443, network: 'tcp', tls: 'reality', sni: ['example.com'], flow: 'xtls-rprx-vision' },
    },
    { tag: 'VMess WS', config: { protocol: 'vmess', port: 8080, network: 'ws', tls: 'none', path: '/vm', host: ['cdn.example.com'] } },
    { tag: 'Trojan TCP', config: { protocol: 'trojan', port: 8444, network: 'tcp', tls: 'none' } },
    { tag: 'HY2', config: { protocol: 'hysteria2', port: 4443 } },
  ],
  users: [
    {
      username: 'alice',
      key: KEYS.alice,
      used_traffic: 1_000,
      lifetime_used_traffic: 5_000,
      data_limit: 50_000,
      data_limit_reset_strategy: 'month',
      expire_strategy: 'FIXED_DATE',
      expire_date: '2099-01-02 03:04:05.000000',
      note: 'VIP',
      services: ['main'],
    },
    {
      username: 'bob',
      key: KEYS.bob,
      enabled: false,
      expire_strategy: 'START_ON_FIRST_USE',
      usage_duration: 30 * 86_400,
      activation_deadline: '2099-03-01 00:00:00',
      services: ['trojan'],
    },
    { username: 'carol', key: KEYS.carol, data_limit: 100, used_traffic: 100, services: ['main', 'trojan'] },
    { username: null, key: KEYS.gone, removed: true },
  ],
};

const pgliteStore = async (spec: MarzneshinStoreSpec): Promise<SourceStore> => {
  const db = new PGlite();
  for (const s of marzneshinStatements('postgres', spec)) await db.exec(s);
  return postgresStoreOf(
    (sql) => db.query(sql, [], { parsers: { 1114: (v: string) => v } }) as never,
    'the Marzneshin database',
    () => db.close(),
  );
};

let scratches = 0;
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

const stores: Array<[string, (spec: MarzneshinStoreSpec) => Promise<SourceStore>]> = [
  ['SQLite', async (spec) => sqliteStore(await marzneshinSqlite(spec), 'the Marzneshin database')],
  ['PostgreSQL (PGlite)', pgliteStore],
];
if (testDatabaseUrl())
  stores.push([
    'PostgreSQL (server, through a URL)',
    async (spec) => {
      const scratch = await createScratchDatabase(`import_marzneshin_${++scratches}`);
      cleanups.push(() => scratch.drop());
      const c = new pg.Client({ connectionString: scratch.url });
      await c.connect();
      for (const s of marzneshinStatements('postgres', spec)) await c.query(s);
      await c.end();
      return postgresStore(scratch.url, 'the Marzneshin database');
    },
  ]);

describe('Marzneshin credentials', () => {
  it('are XXH3-128 of the key: the UUID its 16 bytes, the password its hex (reference vectors)', async () => {
    expect(await marzneshinCredentials(KEYS.alice, 'xxh128')).toEqual({
      uuid: 'cc9c4d55-12a0-5c72-fe5f-6378a7825dff',
      password: 'cc9c4d5512a05c72fe5f6378a7825dff',
    });
    expect(await marzneshinCredentials(KEYS.bob, 'xxh128')).toEqual({
      uuid: '1840005f-7fac-e6fe-0004-e59d3ac886b8',
      password: '1840005f7face6fe0004e59d3ac886b8',
    });
  });

  it('plain: the key itself (as a UUID for VLESS and VMess)', async () => {
    expect(await marzneshinCredentials(KEYS.alice, 'plain')).toEqual({
      uuid: '01234567-89ab-cdef-0123-456789abcdef',
      password: KEYS.alice,
    });
  });
});

describe.each(stores)('readMarzneshin from %s', (_, open) => {
  it('maps every user: derived credentials, services to inbound tags, terms, state; removed users left out', async () => {
    const store = await open(SPEC);
    const batch = await readMarzneshin({ store });
    await store.close();
    expect(batch).toMatchObject({ source: 'marzneshin', sourceVersion: '57eba0a293f2', linkSecret: null });
    expect(batch.users.map((u) => u.username)).toEqual(['alice', 'bob', 'carol']);
    const [alice, bob, carol] = batch.users;
    expect(alice).toMatchObject({
      key: 'alice',
      linkKey: `alice/${KEYS.alice}`,
      status: 'active',
      usedBytes: 1_000,
      lifetimeUsedBytes: 5_000,
      trafficLimitBytes: 50_000,
      renewal: 'month',
      expiresAt: new Date('2099-01-02T03:04:05Z'),
      onHold: null,
      note: 'VIP',
      inboundTags: ['VLESS TCP REALITY', 'VMess WS'],
      credentials: {
        vless: { uuid: 'cc9c4d55-12a0-5c72-fe5f-6378a7825dff', flow: 'xtls-rprx-vision' },
        vmess: { uuid: 'cc9c4d55-12a0-5c72-fe5f-6378a7825dff' },
        trojan: { password: 'cc9c4d5512a05c72fe5f6378a7825dff' },
        shadowsocks: { password: 'cc9c4d5512a05c72fe5f6378a7825dff', method: 'chacha20-ietf-poly1305' },
      },
      createdAt: new Date('2025-01-01T10:00:00.123Z'),
    });
    expect(bob).toMatchObject({
      status: 'disabled',
      onHold: { durationSeconds: 30 * 86_400, startsBy: new Date('2099-03-01T00:00:00Z') },
      expiresAt: null,
      inboundTags: ['Trojan TCP'],
      credentials: { trojan: { password: '1840005f7face6fe0004e59d3ac886b8' } },
    });
    expect(carol).toMatchObject({ status: 'limited', inboundTags: ['Trojan TCP', 'VLESS TCP REALITY', 'VMess WS'] });

    expect(batch.inbounds.map((i) => [i.tag, i.protocol, i.port])).toEqual([
      ['VLESS TCP REALITY', 'vless', 443],
      ['VMess WS', 'vmess', 8080],
      ['Trojan TCP', 'trojan', 8444],
    ]);
    expect(batch.inbounds[1]?.streamSettings).toEqual({
      network: 'ws',
      security: 'none',
      wsSettings: { path: '/vm', headers: { Host: 'cdn.example.com' } },
    });
    expect(batch.notCarried).toEqual([{ what: 'inbound HY2', why: 'protocol hysteria2 is not served here' }]);
  });

  it('refuses a store that is not Marzneshin, saying which table is missing', async () => {
    const store = await open({ services: {}, inbounds: [], users: [] });
    await store.rows('select 1');
    const foreign: SourceStore = { ...store, tables: new Set([...store.tables].filter((t) => t !== 'users_services')) };
    await expect(readMarzneshin({ store: foreign })).rejects.toThrow(ImportSourceError);
    await expect(readMarzneshin({ store: foreign })).rejects.toThrow('no table "users_services": not a Marzneshin database');
    await store.close();
  });
});

describe('a PostgreSQL source', () => {
  it('refuses a URL that is not PostgreSQL, and a server it cannot reach, with a clear error', async () => {
    await expect(postgresStore('mysql://root@127.0.0.1/marzneshin', 'the source')).rejects.toThrow('only PostgreSQL URLs');
    await expect(postgresStore('not a url', 'the source')).rejects.toThrow('not a database URL');
    await expect(postgresStore('postgres://nobody@127.0.0.1:1/none', 'the source')).rejects.toThrow('the source cannot be opened');
  });
});
