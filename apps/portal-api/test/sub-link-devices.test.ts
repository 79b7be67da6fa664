import type { TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';
import { captureMail, type MailCapture } from './mail-capture.ts';

// Issue 36: devices registered by the HWID headers client apps send with GET /sub/{token}, over
// real HTTP (the fast path in front, as served): a new device is registered, one over the
// subscription's device limit gets the documented answer (docs/subscription-link.md) and changes
// nothing, hostile header values are 400 and change nothing; the device lists of the admin API
// and the portal, and removing a device (another customer's is 404).

const BASE = 'https://vpn.example.com';
let portal: PortalTestServer;
let s: TestServer;
let mail: MailCapture;
let groupId: string;

beforeAll(async () => {
  portal = await startPortal(
    { SVC_PUBLIC_BASE_URL: BASE },
    { rate_limits: { magic_link: { per_ip: { limit: 1000, window_seconds: 60 } } } },
  );
  s = portal.s;
  mail = await captureMail(s);
  const node = await portal.post('/api/v1/nodes', { name: 'Helsinki', address: 'hel.example.net' });
  const profile = await portal.post('/api/v1/inbound-profiles', {
    name: 'vless-plain',
    protocol: 'vless',
    stream: { network: 'tcp', security: 'none' },
  });
  const inbound = await portal.post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 443 });
  groupId = (await portal.post('/api/v1/access-groups', { name: 'dev-g', inbound_ids: [inbound.id] })).id;
}, 60_000);
afterAll(async () => {
  await mail?.stop();
  await portal?.stop();
});

const unique = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;

async function subscription(deviceLimit: number | null, clientId?: string) {
  const client = clientId ?? (await portal.post('/api/v1/clients', { email: unique('dev') })).id;
  const sub = await portal.post('/api/v1/subscriptions', {
    client_id: client,
    access_group_ids: [groupId],
    ...(deviceLimit === null ? {} : { device_limit: deviceLimit }),
  });
  return sub as { id: string; link: string; client_id: string };
}

const fetchLink = (link: string, headers: Record<string, string> = {}) =>
  fetch(link.replace(BASE, s.url), { headers: { 'user-agent': 'Happ/3.4.1', ...headers } });
const entries = async (res: Response) =>
  Buffer.from(await res.text(), 'base64')
    .toString('utf8')
    .split('\n')
    .filter(Boolean);
const devicesOf = async (id: string) => {
  const res = await s.api.get(`/api/v1/subscriptions/${id}/devices`, { token: portal.token });
  expect(res.status, res.text).toBe(200);
  return res.body as {
    device_limit: number | null;
    registered: Array<{ id: string; hwid: string; os: string | null; model: string | null }>;
  };
};

describe('GET /sub/{token} with HWID headers', () => {
  it('registers a new device with what it says of itself; fetching again refreshes it', async () => {
    const sub = await subscription(2);
    const res = await fetchLink(sub.link, {
      'x-hwid': 'a1b2c3d4',
      'x-device-os': 'iOS',
      'x-ver-os': '18.3',
      'x-device-model': 'iPhone 14 Pro Max',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-hwid-limit')).toBeNull();
    expect((await entries(res)).map((l) => l.split(':')[0])).toEqual(['vless']);
    expect((await fetchLink(sub.link, { 'x-hwid': 'a1b2c3d4' })).status).toBe(200);
    const view = await devicesOf(sub.id);
    expect(view.device_limit).toBe(2);
    expect(view.registered).toEqual([
      expect.objectContaining({ hwid: 'a1b2c3d4', os: 'iOS', os_version: '18.3', model: 'iPhone 14 Pro Max', user_agent: 'Happ/3.4.1' }),
    ]);
  });

  it('a new device over the limit: 200, one placeholder entry naming why, the HWID headers apps read, nothing registered', async () => {
    const sub = await subscription(1);
    expect((await fetchLink(sub.link, { 'x-hwid': 'first-phone' })).status).toBe(200);
    const before = await devicesOf(sub.id);
    const res = await fetchLink(sub.link, { 'x-hwid': 'second-phone' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-hwid-limit')).toBe('true');
    expect(res.headers.get('x-hwid-max-devices-reached')).toBe('true');
    expect(res.headers.get('x-hwid-active')).toBe('true');
    const announce = res.headers.get('announce') as string;
    expect(announce.startsWith('base64:')).toBe(true);
    expect(Buffer.from(announce.slice(7), 'base64').toString('utf8')).toMatch(/maximum number of devices/);
    expect(res.headers.get('subscription-userinfo')).toMatch(/^upload=0; download=0;/);
    const links = await entries(res);
    expect(links).toHaveLength(1);
    const entry = new URL(links[0] as string);
    expect([entry.hostname, entry.port, decodeURIComponent(entry.hash.slice(1))]).toEqual(['0.0.0.0', '1', '⛔ Device limit reached']);
    expect(await devicesOf(sub.id)).toEqual(before);
    // The registered device keeps getting its servers; a fetch without x-hwid is answered as ever.
    expect((await entries(await fetchLink(sub.link, { 'x-hwid': 'first-phone' })))[0]).toMatch(/hel\.example\.net:443/);
    const plain = await fetchLink(sub.link);
    expect(plain.headers.get('x-hwid-limit')).toBeNull();
    expect((await entries(plain))[0]).toMatch(/hel\.example\.net:443/);
    // Another format gets the same: Clash's document names the reason too.
    const clash = await fetchLink(sub.link, { 'x-hwid': 'third-phone', 'user-agent': 'clash.meta/1.18' });
    expect(clash.headers.get('x-hwid-limit')).toBe('true');
    expect(await clash.text()).toContain('Device limit reached');
  });

  it.each([
    ['an x-hwid of 129 characters', { 'x-hwid': 'a'.repeat(129) }, 'x-hwid'],
    ['an x-hwid with a space', { 'x-hwid': 'a b' }, 'x-hwid'],
    ['an x-hwid beyond ASCII', { 'x-hwid': 'h\u00e4' }, 'x-hwid'],
    ['a model of 129 characters', { 'x-hwid': 'ok-id', 'x-device-model': 'm'.repeat(129) }, 'x-device-model'],
  ])('%s: 400 problem naming the header; nothing registered', async (_what, headers, field) => {
    const sub = await subscription(null);
    const res = await fetchLink(sub.link, headers);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await res.json()) as { errors: Record<string, string> }).errors).toHaveProperty(field);
    expect((await devicesOf(sub.id)).registered).toEqual([]);
  });
});

describe('device lists: admin API and portal', () => {
  async function customer(): Promise<{ id: string; token: string }> {
    const c = (await portal.post('/api/v1/clients', { email: unique('customer') })) as { id: string; email: string };
    await s.api.post('/portal/v1/auth/magic-link', { email: c.email });
    const pair = await s.api.post('/portal/v1/auth/callback', { token: await mail.tokenFor(c.email) });
    expect(pair.status, pair.text).toBe(200);
    return { id: c.id, token: pair.body.access_token };
  }

  it('an admin removes a device (audited), which frees its place; a device of another subscription is 404', async () => {
    const sub = await subscription(1);
    const other = await subscription(1);
    await fetchLink(sub.link, { 'x-hwid': 'old-phone' });
    const [dev] = (await devicesOf(sub.id)).registered;
    expect((await s.api.delete(`/api/v1/subscriptions/${other.id}/devices/${dev?.id}`, { token: portal.token })).status).toBe(404);
    expect((await s.api.delete(`/api/v1/subscriptions/${sub.id}/devices/${dev?.id}`, { token: portal.token })).status).toBe(204);
    const audit = await s.api.get(`/api/v1/audit-log?entity_id=${sub.id}`, { token: portal.token });
    expect(JSON.stringify(audit.body)).toContain('subscription.device_removed');
    expect((await fetchLink(sub.link, { 'x-hwid': 'new-phone' })).headers.get('x-hwid-limit')).toBeNull();
    expect((await devicesOf(sub.id)).registered.map((d) => d.hwid)).toEqual(['new-phone']);
  });

  it('a customer lists and removes their own devices; another customer’s device is 404 and stays', async () => {
    const alice = await customer();
    const bob = await customer();
    const mine = await subscription(3, alice.id);
    const theirs = await subscription(3, bob.id);
    await fetchLink(mine.link, { 'x-hwid': 'alice-laptop', 'x-device-os': 'Windows' });
    await fetchLink(theirs.link, { 'x-hwid': 'bob-phone' });
    const listed = await s.api.get('/portal/v1/devices', { token: alice.token });
    expect(listed.status, listed.text).toBe(200);
    expect(
      listed.body.items.map((i: { subscription_id: string; registered: Array<{ hwid: string }> }) => [
        i.subscription_id,
        i.registered.map((d) => d.hwid),
      ]),
    ).toEqual([[mine.id, ['alice-laptop']]]);
    const bobsDevice = (await devicesOf(theirs.id)).registered[0]?.id as string;
    expect((await s.api.delete(`/portal/v1/devices/${bobsDevice}`, { token: alice.token })).status).toBe(404);
    expect((await devicesOf(theirs.id)).registered).toHaveLength(1);
    const own = listed.body.items[0].registered[0].id as string;
    expect((await s.api.delete(`/portal/v1/devices/${own}`, { token: alice.token })).status).toBe(204);
    expect((await devicesOf(mine.id)).registered).toEqual([]);
    expect((await s.api.get('/portal/v1/devices')).status).toBe(401);
  });
});
