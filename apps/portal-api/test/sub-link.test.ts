import { ingestUsageReport, subscriptionsWithCounters } from '@svc/domain';
import { type TestServer, until } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type PortalTestServer, startPortal } from './harness.ts';

// Issue 6: GET /sub/{token} over real HTTP: the format by User-Agent, the headers apps read,
// documents of subscriptions that do not serve, and 404 for unknown and rotated tokens.

const BASE = 'https://vpn.example.com';
let s: TestServer;
let portal: PortalTestServer;
let token: string;
let link: string;
let subId: string;
let groupId: string;
let inboundIds: string[];
let nodeId: string;
let vmessProfileId: string;

beforeAll(async () => {
  // Answers read the database every time here: these tests also change rows directly.
  // The cache has its own suite (sub-link-cache.test.ts).
  portal = await startPortal({ SVC_PUBLIC_BASE_URL: BASE, SVC_SUB_CACHE_SECONDS: '0' });
  ({ s, token } = portal);
  const { post } = portal;
  const node = await post('/api/v1/nodes', { name: 'Helsinki', address: 'hel.example.net' });
  const vless = await post('/api/v1/inbound-profiles', {
    name: 'vless-reality',
    protocol: 'vless',
    vless_flow: 'xtls-rprx-vision',
    stream: { network: 'tcp', security: 'reality', reality: { dest: 'www.example.com:443', server_names: ['www.example.com'] } },
  });
  const vmess = await post('/api/v1/inbound-profiles', {
    name: 'vmess-ws',
    protocol: 'vmess',
    stream: { network: 'ws', security: 'none', ws: { path: '/vm' } },
  });
  const a = await post('/api/v1/inbounds', { node_id: node.id, profile_id: vless.id, port: 443 });
  const b = await post('/api/v1/inbounds', { node_id: node.id, profile_id: vmess.id, port: 8080 });
  const group = await post('/api/v1/access-groups', { name: 'sub-g', inbound_ids: [a.id, b.id] });
  const client = await post('/api/v1/clients', { email: 'sub-link@example.com' });
  const sub = await post('/api/v1/subscriptions', {
    client_id: client.id,
    access_group_ids: [group.id],
    traffic_limit_bytes: 50_000_000_000,
    expires_at: '2027-01-01T00:00:00Z',
  });
  link = sub.link;
  subId = sub.id;
  groupId = group.id;
  inboundIds = [a.id, b.id];
  nodeId = node.id;
  vmessProfileId = vmess.id;
});
afterAll(() => portal.stop());

const get = (url: string, headers: Record<string, string> = {}) => fetch(url.replace(BASE, s.url), { headers });
const linksOf = async (res: Response) =>
  Buffer.from(await res.text(), 'base64')
    .toString('utf8')
    .split('\n')
    .filter(Boolean);

describe('GET /sub/{token}: the format follows the User-Agent', () => {
  it('share-link apps and unknown apps get the base64 list; every link parses', async () => {
    for (const ua of ['v2rayNG/1.9.30', 'v2rayN/7.10', 'Shadowrocket/2.2.50', 'Happ/1.6', 'curl/8.5.0', '']) {
      const res = await get(link, ua ? { 'user-agent': ua } : {});
      expect(res.status, ua).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      const links = await linksOf(res);
      expect(links.map((l) => l.split(':')[0]).sort(), ua).toEqual(['vless', 'vmess']);
      const v = new URL(links.find((l) => l.startsWith('vless://')) as string);
      expect([v.hostname, v.port, v.searchParams.get('security'), v.searchParams.get('flow')]).toEqual([
        'hel.example.net',
        '443',
        'reality',
        'xtls-rprx-vision',
      ]);
      expect(decodeURIComponent(v.hash.slice(1))).toBe('Helsinki · vless-reality');
    }
  });

  it('mihomo apps get Clash Meta YAML, sing-box apps sing-box JSON', async () => {
    for (const ua of ['clash-verge/v2.2.3', 'ClashMetaForAndroid/2.11.5', 'mihomo/1.19.10', 'FlClash/0.8.80', 'Stash/2.4']) {
      const res = await get(link, { 'user-agent': ua });
      expect(res.headers.get('content-type'), ua).toMatch(/^text\/yaml/);
      const yaml = parseYaml(await res.text());
      expect(yaml.proxies.map((p: { type: string }) => p.type).sort(), ua).toEqual(['vless', 'vmess']);
      expect(res.headers.get('content-disposition')).toMatch(/filename="vpn\.example\.com\.yaml"/);
    }
    for (const ua of ['SFA/1.11.4 (Android 14)', 'SFI/1.12.0', 'sing-box 1.12.0', 'HiddifyNext/2.5.7', 'Karing/1.1.2']) {
      const res = await get(link, { 'user-agent': ua });
      expect(res.headers.get('content-type'), ua).toMatch(/^application\/json/);
      const config = JSON.parse(await res.text());
      expect(
        config.outbounds.map((o: { type: string }) => o.type),
        ua,
      ).toEqual(expect.arrayContaining(['vless', 'vmess']));
    }
  });

  it('a browser (Accept text/html) gets the page: its state, the link, the servers, under a strict CSP; an app with the same Accept does not', async () => {
    const browser = {
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    };
    const res = await get(link, browser);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(res.headers.get('content-disposition')).toBeNull();
    const page = await res.text();
    expect(page.toLowerCase().startsWith('<!doctype html>')).toBe(true);
    expect(page).toContain(link);
    expect(page).toContain('Helsinki · vless-reality');
    expect(page).toContain('<svg');
    // A share-link app sending a browser-like Accept still gets its list.
    expect((await get(link, { ...browser, 'user-agent': 'v2rayNG/1.9.30' })).headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('the page offers the import buttons of the browser’s device, in the order the operator set for it (issue 32 item 6)', async () => {
    const accept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 Mobile/15E148 Safari/604.1';
    const buttons = async (ua: string) =>
      [...(await (await get(link, { 'user-agent': ua, accept })).text()).matchAll(/data-app="([^"]+)"/g)].map((m) => m[1]);
    expect(await buttons(iphone)).toEqual(['happ', 'streisand', 'hiddify', 'shadowrocket', 'v2raytun', 'stash', 'sing-box', 'karing']);
    const set = await s.api.patch('/api/v1/settings/customer-pages', { apps: { ios: ['stash', 'happ'] } }, { token });
    expect(set.status, set.text).toBe(200);
    // Read through a cache that settings.changed drops (on every replica): the next pages follow.
    await until('the new order on the page', async () => JSON.stringify(await buttons(iphone)) === '["stash","happ"]');
    // A desktop browser gets its own platform's apps (v2rayN has no link: copy and QR serve it).
    const windows = await buttons('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36');
    expect(windows).toContain('clash-verge');
    expect(windows).not.toContain('v2rayn');
    expect((await s.api.patch('/api/v1/settings/customer-pages', { apps: {} }, { token })).status).toBe(200);
  });

  it('a change to what the group grants shows on the next fetch (the cached part is dropped on nodes.changed)', async () => {
    const ua = { 'user-agent': 'v2rayNG/1.9.30' };
    expect(await linksOf(await get(link, ua))).toHaveLength(2);
    const extra = await s.api.post(
      '/api/v1/inbounds',
      { node_id: nodeId, profile_id: vmessProfileId, port: 9090, host: 'edge.example.org' },
      { token },
    );
    expect(extra.status, extra.text).toBe(201);
    const patched = await s.api.patch(`/api/v1/access-groups/${groupId}`, { inbound_ids: [...inboundIds, extra.body.id] }, { token });
    expect(patched.status, patched.text).toBe(200);
    const deadline = Date.now() + 3000;
    let links = await linksOf(await get(link, ua));
    while (links.length !== 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      links = await linksOf(await get(link, ua));
    }
    expect(links).toHaveLength(3);
    expect(
      links.some((l) => l.startsWith('vmess://') && JSON.parse(Buffer.from(l.slice(8), 'base64').toString()).add === 'edge.example.org'),
    ).toBe(true);
    const back = await s.api.patch(`/api/v1/access-groups/${groupId}`, { inbound_ids: inboundIds }, { token });
    expect(back.status).toBe(200);
    const until = Date.now() + 3000;
    while ((await linksOf(await get(link, ua))).length !== 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(await linksOf(await get(link, ua))).toHaveLength(2);
  });

  it('sends the headers apps read: subscription-userinfo, update interval, title, web page, no-store', async () => {
    await ingestUsageReport(s.deps, nodeId, {
      report_id: 1n,
      entries: [{ subscription_id: subId, uplink_bytes: 1234n, downlink_bytes: 56789n }],
    });
    const res = await get(link, { 'user-agent': 'v2rayNG/1.9.30' });
    expect(res.headers.get('subscription-userinfo')).toBe(
      `upload=1234; download=56789; total=50000000000; expire=${Date.parse('2027-01-01T00:00:00Z') / 1000}`,
    );
    expect(res.headers.get('profile-update-interval')).toBe('12');
    expect(Buffer.from((res.headers.get('profile-title') ?? '').replace(/^base64:/, ''), 'base64').toString()).toBe('vpn.example.com');
    expect(res.headers.get('profile-web-page-url')).toBe(BASE);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});

describe('GET /sub/{token}: subscriptions that do not serve, and tokens that name nothing', () => {
  it('a disabled subscription is a valid document whose one entry names its state, in every format', async () => {
    expect((await s.api.patch(`/api/v1/subscriptions/${subId}`, { status: 'disabled' }, { token })).status).toBe(200);
    try {
      const list = await linksOf(await get(link, { 'user-agent': 'v2rayNG/1.9.30' }));
      expect(list).toHaveLength(1);
      expect(decodeURIComponent(new URL(list[0] as string).hash.slice(1))).toMatch(/disabled/i);
      const yaml = parseYaml(await (await get(link, { 'user-agent': 'mihomo/1.19.10' })).text());
      expect(yaml.proxies).toHaveLength(1);
      expect(yaml.proxies[0].name).toMatch(/disabled/i);
    } finally {
      expect((await s.api.patch(`/api/v1/subscriptions/${subId}`, { status: 'active' }, { token })).status).toBe(200);
    }
  });

  it('a limited or expired subscription shows its state the same way; the usage header still tells the apps why', async () => {
    const row = await subscriptionsWithCounters(s.deps.db).where('id', '=', subId).executeTakeFirstOrThrow();
    try {
      await s.deps.db
        .updateTable('subscription_counters')
        .set({ used_bytes: 60_000_000_000 })
        .where('subscription_id', '=', subId)
        .execute();
      let res = await get(link, { 'user-agent': 'v2rayNG/1.9.30' });
      let list = await linksOf(res);
      expect(list).toHaveLength(1);
      expect(decodeURIComponent(new URL(list[0] as string).hash.slice(1))).toMatch(/limit/i);
      expect(res.headers.get('subscription-userinfo')).toContain('total=50000000000');

      await s.deps.db.updateTable('subscription_counters').set({ used_bytes: 0 }).where('subscription_id', '=', subId).execute();
      await s.deps.db
        .updateTable('subscriptions')
        .set({ expires_at: new Date(s.clock.now().getTime() - 1000) })
        .where('id', '=', subId)
        .execute();
      res = await get(link, { 'user-agent': 'SFA/1.11.4' });
      const config = JSON.parse(await res.text());
      const proxies = config.outbounds.filter((o: { type: string }) => o.type === 'vless' || o.type === 'vmess');
      expect(proxies).toHaveLength(1);
      expect(proxies[0].tag).toMatch(/expired/i);
      list = await linksOf(await get(link, { 'user-agent': 'Happ/1.6' }));
      expect(decodeURIComponent(new URL(list[0] as string).hash.slice(1))).toMatch(/expired/i);
    } finally {
      await s.deps.db
        .updateTable('subscription_counters')
        .set({ used_bytes: row.used_bytes })
        .where('subscription_id', '=', subId)
        .execute();
      await s.deps.db.updateTable('subscriptions').set({ expires_at: row.expires_at }).where('id', '=', subId).execute();
    }
  });

  it('an unknown, malformed or rotated token is the same bare 404 problem', async () => {
    const bodies: string[] = [];
    for (const t of ['A'.repeat(43), 'B'.repeat(43), 'nope', `${link.slice(-43, -1)}x`]) {
      const res = await get(`${BASE}/sub/${t}`);
      expect(res.status, t).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body = (await res.json()) as Record<string, unknown>;
      delete body.instance;
      bodies.push(JSON.stringify(body));
    }
    expect(new Set(bodies).size).toBe(1);
    const rotated = await s.api.post(`/api/v1/subscriptions/${subId}/rotate-credentials`, undefined, { token });
    expect(rotated.status).toBe(200);
    expect((await get(link)).status).toBe(404);
    expect((await get(rotated.body.link)).status).toBe(200);
    link = rotated.body.link;
  });
});

describe('admin-editable: /api/v1/settings/subscription-link', () => {
  it('rules, title, refresh interval and links apply to the next fetch; bad values are refused field by field and change nothing', async () => {
    const before = await s.api.get('/api/v1/settings/subscription-link', { token });
    expect(before.status).toBe(200);
    expect(before.body.format_rules[0]).toEqual({ user_agent: expect.stringContaining('clash'), format: 'clash-meta' });

    const bad = await s.api.patch(
      '/api/v1/settings/subscription-link',
      { format_rules: [{ user_agent: '^(unclosed', format: 'base64' }], update_interval_hours: 0, support_url: 'ftp://x' },
      { token },
    );
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors)).toEqual(
      expect.arrayContaining(['format_rules.0.user_agent', 'update_interval_hours', 'support_url']),
    );
    expect((await s.api.get('/api/v1/settings/subscription-link', { token })).body).toEqual(before.body);

    const rules = [{ user_agent: '^MyXrayApp/', format: 'xray-json' }, ...before.body.format_rules];
    const patched = await s.api.patch(
      '/api/v1/settings/subscription-link',
      { format_rules: rules, title: 'Acme VPN ✓', update_interval_hours: 6, support_url: 'https://t.me/acme_support' },
      { token },
    );
    expect(patched.status, patched.text).toBe(200);
    try {
      const res = await get(link, { 'user-agent': 'MyXrayApp/3.1' });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const configs = JSON.parse(await res.text());
      expect(Array.isArray(configs)).toBe(true);
      expect(configs.map((c: { remarks: string }) => c.remarks).sort()).toEqual(['Helsinki · vless-reality', 'Helsinki · vmess-ws']);
      expect(Buffer.from((res.headers.get('profile-title') ?? '').replace(/^base64:/, ''), 'base64').toString()).toBe('Acme VPN ✓');
      expect(res.headers.get('profile-update-interval')).toBe('6');
      expect(res.headers.get('support-url')).toBe('https://t.me/acme_support');
      expect(res.headers.get('content-disposition')).toContain(`filename*=UTF-8''${encodeURIComponent('Acme VPN ✓.json')}`);
      const audit = await s.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'settings.updated').execute();
      expect(audit.map((a) => a.entity_id)).toContain('subscription_link');
    } finally {
      const restored = await s.api.patch('/api/v1/settings/subscription-link', { ...before.body }, { token });
      expect(restored.status, restored.text).toBe(200);
    }
    expect((await get(link, { 'user-agent': 'MyXrayApp/3.1' })).headers.get('content-type')).toMatch(/^text\/plain/);
  });
});

describe('User-Agent rules run in linear time (issue 12.2)', () => {
  it('a backtracking pattern is refused, ^(a|a)*$ is stored, and hostile User-Agents get their answer while the process keeps serving', async () => {
    const before = await s.api.get('/api/v1/settings/subscription-link', { token });
    const refused = await s.api.patch(
      '/api/v1/settings/subscription-link',
      { format_rules: [{ user_agent: '^(?=clash)', format: 'clash-meta' }] },
      { token },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errors['format_rules.0.user_agent']).toMatch(/linear-time/);
    const stored = await s.api.patch(
      '/api/v1/settings/subscription-link',
      { format_rules: [{ user_agent: '^(a|a)*$', format: 'clash-meta' }] },
      { token },
    );
    expect(stored.status, stored.text).toBe(200);
    try {
      // With a backtracking engine the first fetch alone takes seconds and the second never
      // ends (the suite's timeout fails it); the health check between them is served.
      const hostile = await get(link, { 'user-agent': `${'a'.repeat(27)}!` });
      expect(hostile.headers.get('content-type')).toMatch(/^text\/plain/);
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
      const longer = await get(link, { 'user-agent': `${'a'.repeat(8_000)}!` });
      expect(longer.status).toBe(200);
      const matching = await get(link, { 'user-agent': 'aaaa' });
      expect(matching.headers.get('content-type')).toMatch(/yaml/);
    } finally {
      expect((await s.api.patch('/api/v1/settings/subscription-link', { ...before.body }, { token })).status).toBe(200);
    }
  });
});
