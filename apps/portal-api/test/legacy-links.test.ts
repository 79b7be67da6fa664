import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { applyImport, type ImportBatch, marzbanCompactToken, withActor } from '@svc/domain';
import { readMarzban } from '@svc/importers';
import { type TestServer, until } from '@svc/testkit';
import { MARZBAN_XRAY_CONFIG, marzbanStore } from '@svc/testkit/marzban-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type PortalTestServer, startPortal } from './harness.ts';

// Issue 34 item 2 for Marzban over real HTTP: after the import, the links customers hold (the
// compact tokens Marzban minted at any time, and pre-0.5 JWTs) answer at /sub/... with our
// formats and headers, not a redirect, carrying the credentials their devices already have;
// a revoked token, a token minted after the import, and a token of another secret are 404.
const BASE = 'https://vpn.example.com';
const SECRET = randomBytes(32).toString('hex');
const UUID = randomUUID();
let s: TestServer;
let portal: PortalTestServer;
let batch: ImportBatch;
const at = (iso: string) => Math.floor(Date.parse(iso) / 1000);

beforeAll(async () => {
  portal = await startPortal({ SVC_PUBLIC_BASE_URL: BASE, SVC_SUB_CACHE_SECONDS: '0' });
  ({ s } = portal);
  const database = await marzbanStore({
    secret: SECRET,
    users: [
      {
        username: 'Alice',
        created_at: '2025-01-01 10:00:00.250000',
        sub_revoked_at: '2025-03-01 00:00:00',
        used_traffic: 1_000_000,
        data_limit: 10_000_000_000,
        expire: at('2027-06-01T00:00:00Z'),
        proxies: [
          { type: 'VLESS', settings: { id: UUID, flow: '' } },
          { type: 'Trojan', settings: { password: 'the-password-alice-holds' } },
        ],
      },
    ],
  });
  batch = await readMarzban({ database, xrayConfig: MARZBAN_XRAY_CONFIG });
  s.clock.set(new Date('2026-11-01T00:00:00Z'));
  await applyImport(withActor(s.deps, { type: 'system', id: 'test' } as never), batch);
  // Our own inbounds put in the imported groups (importing the source's inbounds is its own step).
  const { post } = portal;
  const node = await post('/api/v1/nodes', { name: 'Helsinki', address: 'hel.example.net' });
  const vless = await post('/api/v1/inbound-profiles', {
    name: 'vless-tcp',
    protocol: 'vless',
    stream: { network: 'tcp', security: 'none' },
  });
  const trojan = await post('/api/v1/inbound-profiles', {
    name: 'trojan-ws',
    protocol: 'trojan',
    stream: { network: 'ws', security: 'none', ws: { path: '/t' } },
  });
  const a = await post('/api/v1/inbounds', { node_id: node.id, profile_id: vless.id, port: 8443 });
  const b = await post('/api/v1/inbounds', { node_id: node.id, profile_id: trojan.id, port: 8444 });
  const groups = await s.deps.db.selectFrom('imported_inbounds').select(['tag', 'access_group_id']).execute();
  const group = (tag: string) => groups.find((g) => g.tag === tag)?.access_group_id as string;
  await s.api.patch(`/api/v1/access-groups/${group('VLESS TCP')}`, { inbound_ids: [a.id] }, { token: portal.token });
  await s.api.patch(`/api/v1/access-groups/${group('Trojan TCP')}`, { inbound_ids: [b.id] }, { token: portal.token });
});
afterAll(() => portal?.stop());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${s.url}${path}`, { headers, redirect: 'manual' });
const linksOf = async (res: Response) =>
  Buffer.from(await res.text(), 'base64')
    .toString('utf8')
    .split('\n')
    .filter(Boolean);

function legacyJwt(username: string, iat: number, secret = SECRET): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const body = Buffer.from(JSON.stringify({ sub: username, access: 'subscription', iat })).toString('base64url');
  return `${header}.${body}.${createHmac('sha256', secret).update(`${header}.${body}`).digest('base64url')}`;
}

describe('old Marzban links after the import', () => {
  it('tokens minted at several times after the revocation answer 200 with the credentials the devices hold, not a redirect', async () => {
    for (const minted of [at('2025-03-01T00:00:01Z'), at('2025-09-09T09:09:09Z'), at('2026-10-31T23:59:59Z')]) {
      for (const token of [marzbanCompactToken(SECRET, 'alice', minted), legacyJwt('Alice', minted)]) {
        const res = await get(`/sub/${token}`, { 'user-agent': 'v2rayNG/1.9.30' });
        expect(res.status, token).toBe(200);
        const links = await linksOf(res);
        const vless = new URL(links.find((l) => l.startsWith('vless://')) as string);
        const trojan = new URL(links.find((l) => l.startsWith('trojan://')) as string);
        expect(vless.username).toBe(UUID);
        expect(decodeURIComponent(trojan.username)).toBe('the-password-alice-holds');
        expect([vless.hostname, vless.port]).toEqual(['hel.example.net', '8443']);
        expect(res.headers.get('subscription-userinfo')).toMatch(/download=1000000; total=10000000000; expire=1811808000/);
      }
    }
  });

  it("Marzban's /sub/{token}/{client_type} answers in that format", async () => {
    const token = marzbanCompactToken(SECRET, 'Alice', at('2025-05-05T00:00:00Z'));
    const clash = await get(`/sub/${token}/clash-meta`);
    expect(clash.status).toBe(200);
    expect(clash.headers.get('content-type')).toMatch(/^text\/yaml/);
    // Clash takes Trojan only over TLS: the plain trojan-ws test inbound is left out there.
    expect(parseYaml(await clash.text()).proxies.map((p: { type: string; uuid?: string }) => [p.type, p.uuid])).toEqual([['vless', UUID]]);
    const v2ray = await get(`/sub/${token}/v2ray`, { 'user-agent': 'clash-verge/v2.2.3' });
    expect((await linksOf(v2ray)).length).toBe(2);
    expect((await get(`/sub/${token}/no-such-type`)).status).toBe(404);
  });

  it("Marzban's /sub/{token}/info answers the user's state in Marzban's fields", async () => {
    const token = marzbanCompactToken(SECRET, 'alice', at('2025-06-06T00:00:00Z'));
    const res = await get(`/sub/${token}/info`);
    expect(res.status).toBe(200);
    const info = (await res.json()) as { links: string[] };
    expect(info).toMatchObject({
      username: 'Alice',
      status: 'active',
      subscription_url: expect.stringMatching(/\/sub\/[A-Za-z0-9_-]{43}$/),
    });
    expect(info.links.some((l: string) => l.includes(UUID))).toBe(true);
    expect((await get(`/sub/${marzbanCompactToken(SECRET, 'nobody', at('2025-06-06T00:00:00Z'))}/info`)).status).toBe(404);
  });

  it('a token minted before the revocation, before the user existed, after the import, or under another secret is 404', async () => {
    for (const token of [
      marzbanCompactToken(SECRET, 'alice', at('2025-02-01T00:00:00Z')),
      marzbanCompactToken(SECRET, 'alice', at('2025-01-01T09:00:00Z')),
      marzbanCompactToken(SECRET, 'alice', at('2026-11-02T00:00:00Z')),
      marzbanCompactToken(randomBytes(32).toString('hex'), 'alice', at('2025-09-09T00:00:00Z')),
      marzbanCompactToken(SECRET, 'nobody', at('2025-09-09T00:00:00Z')),
    ]) {
      const res = await get(`/sub/${token}`);
      expect(res.status, token).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    }
  });

  it('the old links answered are counted for their source (9 above: 6 tokens, 2 client types, 1 info), refused ones not', async () => {
    const hits = async () =>
      Number((await s.deps.db.selectFrom('import_sources').select('legacy_hits').executeTakeFirstOrThrow()).legacy_hits);
    await until('the hits written', async () => (await hits()) >= 9);
    expect(await hits()).toBe(9);
    const source = await s.deps.db.selectFrom('import_sources').select('last_legacy_hit_at').executeTakeFirstOrThrow();
    expect(source.last_legacy_hit_at).not.toBeNull();
  });
});

describe("Marzban's /usage", () => {
  it('/sub/{token}/usage answers the traffic counted here per node, in Marzban’s fields; a bad range is 400', async () => {
    const token = marzbanCompactToken(SECRET, 'alice', at('2025-06-06T00:00:00Z'));
    const res = await get(`/sub/${token}/usage?start=2000-01-01T00:00:00&end=2100-01-01T00:00:00`);
    expect(res.status).toBe(400);
    const fine = await get(`/sub/${token}/usage`);
    expect(fine.status).toBe(200);
    expect(await fine.json()).toEqual({ usages: [], username: 'Alice' });
    const sub = await s.deps.db
      .selectFrom('imported_users')
      .select('subscription_id')
      .where('source_key', '=', 'alice')
      .executeTakeFirstOrThrow();
    const node = await s.deps.db.selectFrom('nodes').select('id').where('name', '=', 'Helsinki').executeTakeFirstOrThrow();
    await s.deps.db
      .insertInto('usage_hourly')
      .values([
        {
          subscription_id: sub.subscription_id,
          node_id: node.id,
          hour: new Date('2026-01-05T10:00:00Z'),
          uplink_bytes: 10,
          downlink_bytes: 90,
        },
        {
          subscription_id: sub.subscription_id,
          node_id: node.id,
          hour: new Date('2026-01-06T10:00:00Z'),
          uplink_bytes: 1,
          downlink_bytes: 9,
        },
        {
          subscription_id: sub.subscription_id,
          node_id: node.id,
          hour: new Date('2025-12-01T10:00:00Z'),
          uplink_bytes: 1000,
          downlink_bytes: 0,
        },
      ])
      .execute();
    const ranged = await get(`/sub/${token}/usage?start=2026-01-01&end=2026-01-31`);
    expect(await ranged.json()).toEqual({ usages: [{ node_id: node.id, node_name: 'Helsinki', used_traffic: 110 }], username: 'Alice' });
    expect((await get(`/sub/${token}/usage?start=2026-13-01`)).status).toBe(400);
  });
});

describe('rotating the subscription retires its old links', () => {
  it('after a rotation the old token is 404, and re-importing does not bring it back', async () => {
    const token = marzbanCompactToken(SECRET, 'alice', at('2025-09-09T09:09:09Z'));
    expect((await get(`/sub/${token}`)).status).toBe(200);
    const row = await s.deps.db.selectFrom('imported_users').select('subscription_id').executeTakeFirstOrThrow();
    const rotated = await s.api.post(`/api/v1/subscriptions/${row.subscription_id}/rotate-credentials`, undefined, { token: portal.token });
    expect(rotated.status, rotated.text).toBe(200);
    expect((await get(`/sub/${token}`)).status).toBe(404);
    const retired = await s.deps.db.selectFrom('imported_users').select('links_retired_at').executeTakeFirstOrThrow();
    expect(retired.links_retired_at).not.toBeNull();
    // Importing again (the old panel still runs) puts neither the old link nor the old credentials back.
    const read = () =>
      s.deps.db.selectFrom('subscriptions').select('vless_uuid').where('id', '=', row.subscription_id).executeTakeFirstOrThrow();
    const rotatedUuid = (await read()).vless_uuid;
    expect(rotatedUuid).not.toBe(UUID);
    await applyImport(withActor(s.deps, { type: 'system', id: 'test' } as never), batch);
    expect((await get(`/sub/${token}`)).status).toBe(404);
    expect((await read()).vless_uuid).toBe(rotatedUuid);
  });
});
