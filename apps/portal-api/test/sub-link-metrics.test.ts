import { type TestServer, until } from '@svc/testkit';
import { type Scrape, scrapeMetrics } from '@svc/testkit/metrics-scrape';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';

// docs/observability.md: GET /sub/{token} is counted by route pattern (the token never becomes
// a label), whether the fast path answers before Hono or the handler does, and each document
// read as a cache hit or miss.

const BASE = 'https://vpn.example.com';
const HTTP = 'svc_http_request_duration_seconds';
const SUB = { route: '/sub/:token', method: 'GET' };
let s: TestServer;
let portal: PortalTestServer;
let link: string;
let clientId: string;
let groupId: string;

beforeAll(async () => {
  portal = await startPortal({ SVC_PUBLIC_BASE_URL: BASE, SVC_METRICS_PORT: '0' });
  s = portal.s;
  const { post } = portal;
  const node = await post('/api/v1/nodes', { name: 'Bergen', address: 'bgo.example.net' });
  const profile = await post('/api/v1/inbound-profiles', {
    name: 'm-vless',
    protocol: 'vless',
    stream: { network: 'tcp', security: 'none' },
  });
  const inbound = await post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.id, port: 443 });
  const group = await post('/api/v1/access-groups', { name: 'm-g', inbound_ids: [inbound.id] });
  const client = await post('/api/v1/clients', { email: 'metrics@example.com' });
  clientId = client.id;
  groupId = group.id;
  link = (await post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [group.id] })).link;
});
afterAll(() => portal.stop());

const scrape = (): Promise<Scrape> => scrapeMetrics(s.metricsUrl as string);
const get = (url: string, headers: Record<string, string> = { 'user-agent': 'v2rayNG/1.9.30' }) =>
  fetch(url.replace(BASE, s.url), { headers });
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('GET /sub/{token} metrics', () => {
  it('a link read once is a miss, then a hit while cached; both counted under /sub/:token, never the token', async () => {
    // The first answer also sets up the cache's bus subscriptions (and empties it): warm up.
    expect((await get(link)).status).toBe(200);
    await settle();
    const other = (await portal.post('/api/v1/subscriptions', { client_id: clientId, access_group_ids: [groupId] })).link as string;
    await settle();
    const hits = async () => (await scrape()).value('svc_sub_cache_requests_total', { result: 'hit' });
    const misses = async () => (await scrape()).value('svc_sub_cache_requests_total', { result: 'miss' });
    const before = await scrape();
    // Never read before: a miss, whatever the bus does.
    expect((await get(other)).status).toBe(200);
    expect(await misses()).toBe(before.value('svc_sub_cache_requests_total', { result: 'miss' }) + 1);
    expect(await hits()).toBe(before.value('svc_sub_cache_requests_total', { result: 'hit' }));
    // Once the announcement of its creation has emptied the cache and a read kept it: hits.
    await until('a read from the cache', async () => {
      const h = await hits();
      expect((await get(other)).status).toBe(200);
      return (await hits()) > h;
    });
    const middle = await scrape();
    expect((await get(other)).status).toBe(200);
    expect((await get(other)).status).toBe(200);
    const after = await scrape();
    const grew = (result: string) =>
      after.value('svc_sub_cache_requests_total', { result }) - middle.value('svc_sub_cache_requests_total', { result });
    expect(grew('hit')).toBe(2);
    expect(grew('miss')).toBe(0);
    expect(after.count(HTTP, { ...SUB, status_class: '2xx' }) - before.count(HTTP, { ...SUB, status_class: '2xx' })).toBeGreaterThanOrEqual(
      4,
    );
    for (const l of [link, other]) {
      const token = new URL(l).pathname.split('/').at(-1) as string;
      expect(JSON.stringify(after.labelSets(HTTP))).not.toContain(token);
    }
  });

  it('an unknown token is never cached: a miss each time, a 4xx under the same route', async () => {
    const unknown = `${BASE}/sub/${'Q'.repeat(43)}`;
    const before = await scrape();
    expect((await get(unknown)).status).toBe(404);
    await settle();
    expect((await get(unknown)).status).toBe(404);
    const after = await scrape();
    expect(
      after.value('svc_sub_cache_requests_total', { result: 'miss' }) - before.value('svc_sub_cache_requests_total', { result: 'miss' }),
    ).toBe(2);
    expect(after.value('svc_sub_cache_requests_total', { result: 'hit' })).toBe(
      before.value('svc_sub_cache_requests_total', { result: 'hit' }),
    );
    expect(after.count(HTTP, { ...SUB, status_class: '4xx' }) - before.count(HTTP, { ...SUB, status_class: '4xx' })).toBe(2);
  });

  it('the page a browser gets (answered by the handler, not the fast path) is counted the same way', async () => {
    const before = await scrape();
    const page = await get(link, {
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0',
      accept: 'text/html,application/xhtml+xml',
    });
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const after = await scrape();
    // One document read, a hit or a miss (whether the cache holds it now is the bus's timing).
    expect(after.value('svc_sub_cache_requests_total') - before.value('svc_sub_cache_requests_total')).toBe(1);
    expect(after.count(HTTP, { ...SUB, status_class: '2xx' }) - before.count(HTTP, { ...SUB, status_class: '2xx' })).toBe(1);
  });
});
