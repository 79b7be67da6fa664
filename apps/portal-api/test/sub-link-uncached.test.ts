import type { TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';

// GET /sub/{token} with the answer cache off (SVC_SUB_CACHE_SECONDS=0): every request reads the
// database, yet the body of a link whose servers did not change is rendered once (the domain
// hands the same servers array back; the portal keys bodies on it). Whatever changes what a link
// lists (credentials, what is granted, a node) must show in the very next body.

const BASE = 'https://vpn.example.com';
let s: TestServer;
let portal: PortalTestServer;
let token: string;
let link: string;
let subId: string;
let nodeId: string;
let profileId: string;

beforeAll(async () => {
  portal = await startPortal({ SVC_PUBLIC_BASE_URL: BASE, SVC_SUB_CACHE_SECONDS: '0' });
  ({ s, token } = portal);
  const { post } = portal;
  const node = await post('/api/v1/nodes', { name: 'Oslo', address: 'osl.example.net' });
  nodeId = node.id;
  const profile = await post('/api/v1/inbound-profiles', {
    name: 'trojan-ws',
    protocol: 'trojan',
    stream: { network: 'ws', security: 'none', ws: { path: '/t' } },
  });
  profileId = profile.id;
  const inbound = await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 8080 });
  const group = await post('/api/v1/access-groups', { name: 'uncached-g', inbound_ids: [inbound.id] });
  const client = await post('/api/v1/clients', { email: 'uncached@example.com' });
  const sub = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
  link = sub.link;
  subId = sub.id;
});
afterAll(() => portal.stop());

const ua = { 'user-agent': 'v2rayNG/1.9.30' };
const get = (url: string) => fetch(url.replace(BASE, s.url), { headers: ua });
const linkOf = async (res: Response) =>
  new URL(
    Buffer.from(await res.text(), 'base64')
      .toString('utf8')
      .split('\n')[0] as string,
  );
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('GET /sub/{token} without the answer cache', () => {
  it('usage shows at once in the headers while the body stays the same', async () => {
    const first = await get(link);
    const body = await first.text();
    await s.deps.db.updateTable('subscription_counters').set({ period_uplink_bytes: 777 }).where('subscription_id', '=', subId).execute();
    const second = await get(link);
    expect(second.headers.get('subscription-userinfo')).toMatch(/^upload=777; download=0;/);
    expect(await second.text()).toBe(body);
  });

  it('rotated credentials are in the very next body (never a body rendered for the old ones)', async () => {
    const before = await linkOf(await get(link));
    const rotated = await s.api.post(`/api/v1/subscriptions/${subId}/rotate-credentials`, undefined, { token });
    expect(rotated.status).toBe(200);
    link = rotated.body.link;
    const after = await linkOf(await get(link));
    expect(after.username).not.toBe(before.username);
    expect(after.username).toBe(rotated.body.trojan_password ?? after.username);
  });

  it('a renamed node or profile is in the next body (no revision moves, yet the link changes)', async () => {
    expect(decodeURIComponent((await linkOf(await get(link))).hash.slice(1))).toBe('Oslo · trojan-ws');
    expect((await s.api.patch(`/api/v1/nodes/${nodeId}`, { name: 'Bergen' }, { token })).status).toBe(200);
    await settle();
    expect(decodeURIComponent((await linkOf(await get(link))).hash.slice(1))).toBe('Bergen · trojan-ws');
    expect((await s.api.patch(`/api/v1/inbound-profiles/${profileId}`, { name: 'trojan-web' }, { token })).status).toBe(200);
    await settle();
    expect(decodeURIComponent((await linkOf(await get(link))).hash.slice(1))).toBe('Bergen · trojan-web');
  });
});
