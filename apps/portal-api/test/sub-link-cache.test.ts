import type { TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';

// GET /sub/{token} answers cached in the portal process (http.sub_cache_seconds, default 30):
// served from memory, yet a rotation, a status change or a change to what the group grants
// shows on the very next fetch, because every such change announces itself on the bus.

const BASE = 'https://vpn.example.com';
let s: TestServer;
let portal: PortalTestServer;
let token: string;
let link: string;
let subId: string;
let groupId: string;
let inboundId: string;

beforeAll(async () => {
  portal = await startPortal({ SVC_PUBLIC_BASE_URL: BASE });
  ({ s, token } = portal);
  const { post } = portal;
  const node = await post('/api/v1/nodes', { name: 'Oslo', address: 'osl.example.net' });
  const profile = await post('/api/v1/inbound-profiles', {
    name: 'trojan-ws',
    protocol: 'trojan',
    stream: { network: 'ws', security: 'none', ws: { path: '/t' } },
  });
  const inbound = await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 8080 });
  const group = await post('/api/v1/access-groups', { name: 'cache-g', inbound_ids: [inbound.id] });
  const client = await post('/api/v1/clients', { email: 'cache@example.com' });
  const sub = await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] });
  link = sub.link;
  subId = sub.id;
  groupId = group.id;
  inboundId = inbound.id;
});
afterAll(() => portal.stop());

const ua = { 'user-agent': 'v2rayNG/1.9.30' };
const get = (url: string) => fetch(url.replace(BASE, s.url), { headers: ua });
const linksOf = async (res: Response) =>
  Buffer.from(await res.text(), 'base64')
    .toString('utf8')
    .split('\n')
    .filter(Boolean);
/** The next answer, after giving the bus a moment to deliver (it delivers on a later turn). */
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('GET /sub/{token} from the cache', () => {
  it('answers from memory: a row changed behind the domain (no announcement) is not seen until the age limit', async () => {
    await get(link); // the first answer also sets up the cache's bus subscriptions
    await settle();
    const first = await get(link);
    expect(first.headers.get('subscription-userinfo')).toMatch(/^upload=0; download=0;/);
    // As the usage ingest would count it, written behind the domain's back.
    await s.deps.db.updateTable('subscription_counters').set({ period_uplink_bytes: 777 }).where('subscription_id', '=', subId).execute();
    expect((await get(link)).headers.get('subscription-userinfo')).toMatch(/^upload=0; download=0;/);
  });

  it('a change to what the group grants shows on the next fetch', async () => {
    expect(await linksOf(await get(link))).toHaveLength(1);
    expect((await s.api.patch(`/api/v1/access-groups/${groupId}`, { inbound_ids: [] }, { token })).status).toBe(200);
    await settle();
    expect(decodeURIComponent(new URL((await linksOf(await get(link)))[0] as string).hash.slice(1))).toMatch(/no servers/i);
    expect((await s.api.patch(`/api/v1/access-groups/${groupId}`, { inbound_ids: [inboundId] }, { token })).status).toBe(200);
    await settle();
    expect(decodeURIComponent(new URL((await linksOf(await get(link)))[0] as string).hash.slice(1))).toBe('Oslo · trojan-ws');
  });

  it('a status change shows on the next fetch', async () => {
    expect((await s.api.patch(`/api/v1/subscriptions/${subId}`, { status: 'disabled' }, { token })).status).toBe(200);
    await settle();
    expect(decodeURIComponent(new URL((await linksOf(await get(link)))[0] as string).hash.slice(1))).toMatch(/disabled/i);
    expect((await s.api.patch(`/api/v1/subscriptions/${subId}`, { status: 'active' }, { token })).status).toBe(200);
    await settle();
    expect(await linksOf(await get(link))).toHaveLength(1);
  });

  it('a rotated token is refused on the next fetch, never served from memory', async () => {
    expect((await get(link)).status).toBe(200);
    const rotated = await s.api.post(`/api/v1/subscriptions/${subId}/rotate-credentials`, undefined, { token });
    expect(rotated.status).toBe(200);
    await settle();
    expect((await get(link)).status).toBe(404);
    expect((await get(rotated.body.link)).status).toBe(200);
  });
});
