import { applyImport, withActor } from '@svc/domain';
import { readMarzneshin, sqliteStore } from '@svc/importers';
import type { TestServer } from '@svc/testkit';
import { marzneshinSqlite } from '@svc/testkit/marzneshin-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type PortalTestServer, startPortal } from './harness.ts';

// Issue 34 items 2 and 3 for Marzneshin over real HTTP: after the import (its inbounds bound on
// a node of ours by the import itself), /sub/{username}/{key} answers here with the credentials
// Marzneshin derived from the key (the ones the devices hold), on the source's ports; its client
// types and /info too; a wrong key is 404.
const KEY = '0123456789abcdef0123456789abcdef';
/** XXH3-128 of KEY (the reference vector, shared/notes/import-sources.md A.2). */
const UUID = 'cc9c4d55-12a0-5c72-fe5f-6378a7825dff';
const PASSWORD = 'cc9c4d5512a05c72fe5f6378a7825dff';
let s: TestServer;
let portal: PortalTestServer;

beforeAll(async () => {
  portal = await startPortal({ SVC_PUBLIC_BASE_URL: 'https://vpn.example.com', SVC_SUB_CACHE_SECONDS: '0' });
  ({ s } = portal);
  const node = await portal.post('/api/v1/nodes', { name: 'Riga', address: 'rix.example.net' });
  const bytes = await marzneshinSqlite({
    services: { main: ['VLESS TCP', 'Trojan TCP'] },
    inbounds: [
      { tag: 'VLESS TCP', config: { protocol: 'vless', port: 8443, network: 'tcp', tls: 'none' } },
      { tag: 'Trojan TCP', config: { protocol: 'trojan', port: 8444, network: 'tcp', tls: 'none' } },
    ],
    users: [{ username: 'alice', key: KEY, data_limit: 10_000, used_traffic: 700, services: ['main'] }],
  });
  const batch = await readMarzneshin({ store: await sqliteStore(bytes, 'the Marzneshin database') });
  const report = await applyImport(withActor(s.deps, { type: 'system', id: 'test' } as never), batch, { nodes: [node.id] });
  expect(report.counts).toMatchObject({ users_created: 1, inbounds_created: 2 });
});
afterAll(() => portal?.stop());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${s.url}${path}`, { headers, redirect: 'manual' });
const linksOf = async (res: Response) =>
  Buffer.from(await res.text(), 'base64')
    .toString('utf8')
    .split('\n')
    .filter(Boolean);

describe("Marzneshin's old links after the import", () => {
  it('/sub/{username}/{key} answers share links with the key-derived uuid and password, on the source ports, and the usage header', async () => {
    const res = await get(`/sub/alice/${KEY}`, { 'user-agent': 'v2rayNG/1.9.30' });
    expect(res.status).toBe(200);
    const links = (await linksOf(res)).map((l) => new URL(l));
    const vless = links.find((l) => l.protocol === 'vless:');
    const trojan = links.find((l) => l.protocol === 'trojan:');
    expect([vless?.username, vless?.hostname, vless?.port]).toEqual([UUID, 'rix.example.net', '8443']);
    expect([trojan?.username, trojan?.port]).toEqual([PASSWORD, '8444']);
    expect(res.headers.get('subscription-userinfo')).toMatch(/download=700; total=10000/);
  });

  it('/sub/{username}/{key}/{client_type} answers in that format; /info in Marzneshin’s fields', async () => {
    const clash = await get(`/sub/alice/${KEY}/clash-meta`, { 'user-agent': 'v2rayNG/1.9.30' });
    expect(clash.status).toBe(200);
    expect(parseYaml(await clash.text()).proxies.map((p: { uuid?: string }) => p.uuid)).toContain(UUID);
    const links = await get(`/sub/alice/${KEY}/links`, { 'user-agent': 'clash-verge/v2.2.3' });
    expect((await linksOf(links)).length).toBe(2);
    const info = await get(`/sub/alice/${KEY}/info`);
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({ username: 'alice', used_traffic: 700, data_limit: 10_000, is_active: true, enabled: true });
  });

  it('/sub/{username}/{key}/usage answers the traffic counted here per hour (per day beyond three days), in Marzneshin’s fields', async () => {
    const sub = await s.deps.db
      .selectFrom('imported_users')
      .select('subscription_id')
      .where('username', '=', 'alice')
      .executeTakeFirstOrThrow();
    const node = await s.deps.db.selectFrom('nodes').select('id').where('name', '=', 'Riga').executeTakeFirstOrThrow();
    await s.deps.db
      .insertInto('usage_hourly')
      .values([
        {
          subscription_id: sub.subscription_id,
          node_id: node.id,
          hour: new Date('2026-03-01T10:00:00Z'),
          uplink_bytes: 100,
          downlink_bytes: 900,
        },
        {
          subscription_id: sub.subscription_id,
          node_id: node.id,
          hour: new Date('2026-03-01T12:00:00Z'),
          uplink_bytes: 5,
          downlink_bytes: 45,
        },
      ])
      .execute();
    const hourly = await get(`/sub/alice/${KEY}/usage?start=2026-03-01T09:00:00&end=2026-03-01T13:00:00`);
    expect(hourly.status).toBe(200);
    const h = (await hourly.json()) as { step: number; total: number; usages: Array<[number, number]> };
    expect(h.step).toBe(3600);
    expect(h.total).toBe(1050);
    expect(h.usages.filter(([, b]) => b > 0)).toEqual([
      [Date.parse('2026-03-01T10:00:00Z') / 1000, 1000],
      [Date.parse('2026-03-01T12:00:00Z') / 1000, 50],
    ]);
    const daily = await get(`/sub/alice/${KEY}/usage?start=2026-02-20&end=2026-03-10`);
    expect(await daily.json()).toMatchObject({ step: 86_400, total: 1050 });
    for (const q of ['start=yesterday', 'start=2026-03-02&end=2026-03-01', `start=${'2'.repeat(50)}`])
      expect((await get(`/sub/alice/${KEY}/usage?${q}`)).status, q).toBe(400);
  });

  it('a wrong key, another user, an unknown client type or a key of another case is 404', async () => {
    for (const path of [
      `/sub/alice/${'f'.repeat(32)}`,
      `/sub/bob/${KEY}`,
      `/sub/alice/${KEY}/wireguard`,
      `/sub/alice/${KEY.toUpperCase()}`,
      `/sub/alice/${KEY}/info/more`,
    ])
      expect((await get(path)).status, path).toBe(404);
  });
});
