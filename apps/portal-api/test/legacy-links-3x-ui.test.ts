import { randomUUID } from 'node:crypto';
import { applyImport, withActor } from '@svc/domain';
import { read3xui } from '@svc/importers';
import { type TestServer, until } from '@svc/testkit';
import { freePort } from '@svc/testkit/engine-process';
import { xuiStore } from '@svc/testkit/xui-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type PortalTestServer, startPortal } from './harness.ts';

// Issue 34 item 2 for 3x-ui over real HTTP: after the import, a subscriber's old /sub/{subId},
// /json/{subId} and /clash/{subId} answer here with the credentials their devices hold, in that
// format, not by a redirect; an unknown subId is 404; the hits are counted for the source.
const UUID = randomUUID();
const SUB_ID = 'k3x9q2m7p1z8w4ve';
let s: TestServer;
let portal: PortalTestServer;
let subPort: number;

beforeAll(async () => {
  subPort = await freePort();
  // 3x-ui's subscription port (2096 there; a free one here) answers too: http.extra_ports.
  portal = await startPortal({
    SVC_PUBLIC_BASE_URL: 'https://vpn.example.com',
    SVC_SUB_CACHE_SECONDS: '0',
    SVC_HTTP_EXTRA_PORTS: String(subPort),
  });
  ({ s } = portal);
  const database = await xuiStore({
    clientTables: true,
    inbounds: [
      {
        tag: 'inbound-443',
        protocol: 'vless',
        port: 443,
        clients: [{ email: 'erin-phone', subId: SUB_ID, id: UUID, totalGB: 10 * 1024 ** 3, up: 5, down: 10 }],
      },
      {
        tag: 'inbound-8443',
        protocol: 'trojan',
        port: 8443,
        clients: [{ email: 'erin-laptop', subId: SUB_ID, password: 'erin-trojan-password' }],
      },
    ],
  });
  await applyImport(withActor(s.deps, { type: 'system', id: 'test' } as never), await read3xui({ database }));
  const { post } = portal;
  const node = await post('/api/v1/nodes', { name: 'Oslo', address: 'osl.example.net' });
  const vless = await post('/api/v1/inbound-profiles', {
    name: 'vless-tcp',
    protocol: 'vless',
    stream: { network: 'tcp', security: 'none' },
  });
  const a = await post('/api/v1/inbounds', { node_id: node.id, profile_id: vless.id, port: 443 });
  const group = (
    await s.deps.db.selectFrom('imported_inbounds').select('access_group_id').where('tag', '=', 'inbound-443').executeTakeFirstOrThrow()
  ).access_group_id;
  await s.api.patch(`/api/v1/access-groups/${group}`, { inbound_ids: [a.id] }, { token: portal.token });
});
afterAll(() => portal?.stop());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${s.url}${path}`, { headers, redirect: 'manual' });

describe("3x-ui's old links after the import", () => {
  it('/sub/{subId} answers the share links with the uuid the devices hold, and the usage in subscription-userinfo', async () => {
    const res = await get(`/sub/${SUB_ID}`, { 'user-agent': 'v2rayNG/1.9.30' });
    expect(res.status).toBe(200);
    const links = Buffer.from(await res.text(), 'base64')
      .toString('utf8')
      .split('\n')
      .filter(Boolean);
    const vless = new URL(links.find((l) => l.startsWith('vless://')) as string);
    expect([vless.username, vless.hostname, vless.port]).toEqual([UUID, 'osl.example.net', '443']);
    expect(res.headers.get('subscription-userinfo')).toMatch(/download=15; total=10737418240/);
  });

  it('/json/{subId} answers Xray JSON and /clash/{subId} Clash YAML, whatever the User-Agent', async () => {
    const json = await get(`/json/${SUB_ID}`, { 'user-agent': 'curl/8' });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.stringify(await json.json())).toContain(UUID);
    const clash = await get(`/clash/${SUB_ID}`, { 'user-agent': 'v2rayNG/1.9.30' });
    expect(clash.status).toBe(200);
    expect(parseYaml(await clash.text()).proxies.map((p: { uuid?: string }) => p.uuid)).toEqual([UUID]);
  });

  it("3x-ui's own subscription port (http.extra_ports) answers the same links", async () => {
    const res = await fetch(`http://127.0.0.1:${subPort}/sub/${SUB_ID}`, { headers: { 'user-agent': 'v2rayNG/1.9.30' } });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.text(), 'base64').toString('utf8')).toContain(UUID);
  });

  it('an unknown subId, on any of the three paths, is 404', async () => {
    for (const path of ['/sub/nosuchsubid00000', '/json/nosuchsubid00000', '/clash/nosuchsubid00000', '/json/..%2F..%2Fetc'])
      expect((await get(path)).status, path).toBe(404);
  });

  it('the hits are counted for the source (4 answered above)', async () => {
    await until(
      'the hits written',
      async () => Number((await s.deps.db.selectFrom('import_sources').select('legacy_hits').executeTakeFirstOrThrow()).legacy_hits) >= 4,
    );
    expect(Number((await s.deps.db.selectFrom('import_sources').select('legacy_hits').executeTakeFirstOrThrow()).legacy_hits)).toBe(4);
  });
});
