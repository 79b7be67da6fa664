import { randomUUID } from 'node:crypto';
import { applyImport, type ImportBatch, withActor } from '@svc/domain';
import type { TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type PortalTestServer, startPortal } from './harness.ts';

// Issue 34 item 2 for Remnawave over real HTTP: its panel's /api/sub/{shortUuid} (+ /{clientType},
// /info) and its subscription page's /{shortUuid} at the root of the host answer here with the
// credentials the devices hold; a root path that is not an imported short uuid is untouched (the
// root's own answer); an unknown short uuid is 404.
const UUID = randomUUID();
const SHORT = 'Ab3_xYz-0123456789';
let s: TestServer;
let portal: PortalTestServer;

const batch = (): ImportBatch => ({
  source: 'remnawave',
  sourceVersion: '20260720132335_drop_user_uuid',
  linkSecret: null,
  inbounds: [
    {
      tag: 'VLESS TCP',
      protocol: 'vless',
      port: 443,
      listen: null,
      streamSettings: { network: 'tcp', security: 'none' },
      shadowsocksMethod: null,
      shadowsocksServerKey: null,
      sniffing: null,
    },
  ],
  users: [
    {
      key: 'hana',
      username: 'hana',
      linkKey: SHORT,
      email: null,
      status: 'active',
      usedBytes: 42,
      lifetimeUsedBytes: 42,
      trafficLimitBytes: 1_000,
      renewal: 'no_reset',
      expiresAt: new Date('2099-01-01T00:00:00Z'),
      onHold: null,
      credentials: { vless: { uuid: UUID, flow: '' }, trojan: { password: 't' }, shadowsocks: { password: 's', method: 'aes-128-gcm' } },
      inboundTags: ['VLESS TCP'],
      note: null,
      createdAt: new Date('2025-01-01T00:00:00Z'),
      linksRevokedAt: null,
    },
  ],
  notCarried: [],
});

beforeAll(async () => {
  portal = await startPortal({ SVC_PUBLIC_BASE_URL: 'https://vpn.example.com', SVC_SUB_CACHE_SECONDS: '0' });
  ({ s } = portal);
  const node = await portal.post('/api/v1/nodes', { name: 'Tallinn', address: 'tll.example.net' });
  await applyImport(withActor(s.deps, { type: 'system', id: 'test' } as never), batch(), { nodes: [node.id] });
});
afterAll(() => portal?.stop());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${s.url}${path}`, { headers, redirect: 'manual' });
const vlessOf = async (res: Response) =>
  Buffer.from(await res.text(), 'base64')
    .toString('utf8')
    .split('\n')
    .find((l) => l.startsWith('vless://'));

describe("Remnawave's old links after the import", () => {
  it('/api/sub/{shortUuid} and /{shortUuid} at the root answer the share links the devices hold', async () => {
    for (const path of [`/api/sub/${SHORT}`, `/${SHORT}`]) {
      const res = await get(path, { 'user-agent': 'Happ/1.0' });
      expect(res.status, path).toBe(200);
      const vless = new URL((await vlessOf(res)) as string);
      expect([vless.username, vless.hostname, vless.port]).toEqual([UUID, 'tll.example.net', '443']);
      expect(res.headers.get('subscription-userinfo')).toMatch(/download=42; total=1000/);
    }
  });

  it('/{shortUuid}/{clientType} answers in that format on both paths; /info in Remnawave’s fields', async () => {
    for (const path of [`/api/sub/${SHORT}/mihomo`, `/${SHORT}/clash`]) {
      const res = await get(path, { 'user-agent': 'curl/8' });
      expect(res.status, path).toBe(200);
      expect(parseYaml(await res.text()).proxies.map((p: { uuid?: string }) => p.uuid)).toEqual([UUID]);
    }
    const info = await get(`/api/sub/${SHORT}/info`);
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({
      response: {
        isFound: true,
        user: { username: 'hana', trafficUsedBytes: '42', trafficLimitBytes: '1000', isActive: true, userStatus: 'ACTIVE' },
      },
    });
  });

  it('an unknown short uuid is 404; root paths that are not one are left to the root', async () => {
    for (const path of ['/api/sub/nosuchshortuuid0000', '/nosuchshortuuid0000', `/${SHORT}/nosuchtype`, '/api/sub/x/../../etc'])
      expect((await get(path)).status, path).toBe(404);
    // The portal's own API under the root is not shadowed.
    expect((await get('/portal/v1/openapi.json')).status).toBe(200);
  });
});
