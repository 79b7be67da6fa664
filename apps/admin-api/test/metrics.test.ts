import { setupOwner, type TestServer } from '@svc/testkit';
import { scrapeMetrics } from '@svc/testkit/metrics-scrape';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// docs/observability.md: /metrics over real HTTP, parsed with a Prometheus text-format parser.

const TOKEN = 'scrape-token-for-tests-0123456789';
const HTTP = 'svc_http_request_duration_seconds';

describe('the admin API with a scrape token: /metrics on the public port, guarded', () => {
  let s: TestServer;
  let access: string;
  beforeAll(async () => {
    s = await startAdminApi({ env: { SVC_METRICS_TOKEN: TOKEN, SVC_METRICS_PORT: '0' } });
    access = (await setupOwner(s)).access_token;
  });
  afterAll(() => s.stop());

  it('a scrape without the token, or with another, is a 401 problem and shows no metric', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-wrong-token-wrong', `Basic ${TOKEN}`, TOKEN]) {
      for (const url of [`${s.url}/metrics`, s.metricsUrl as string]) {
        const res = await fetch(url, authorization ? { headers: { authorization } } : {});
        expect(res.status, `${url} ${authorization}`).toBe(401);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
        const body = await res.json();
        expect(body).toMatchObject({ type: 'urn:svc:problem:unauthenticated', status: 401 });
        expect(JSON.stringify(body)).not.toContain('svc_');
      }
    }
  });

  it('a request to a route counts under its pattern, method and status class, never its path', async () => {
    const before = await scrapeMetrics(`${s.url}/metrics`, TOKEN);
    const missing = `nod_${'z'.repeat(20)}`;
    const res = await s.api.get(`/api/v1/nodes/${missing}`, { token: access });
    expect(res.status).toBe(404);
    expect((await s.api.get('/api/v1/nodes', { token: access })).status).toBe(200);
    const after = await scrapeMetrics(`${s.url}/metrics`, TOKEN);
    const one = { route: '/api/v1/nodes/:id', method: 'GET', status_class: '4xx' };
    expect(after.count(HTTP, one) - before.count(HTTP, one)).toBe(1);
    const list = { route: '/api/v1/nodes', method: 'GET', status_class: '2xx' };
    expect(after.count(HTTP, list) - before.count(HTTP, list)).toBe(1);
    expect(after.families.get(HTTP)?.type).toBe('histogram');
    expect(JSON.stringify(after.labelSets(HTTP))).not.toContain(missing);
  });

  it('paths no route matches share one label, `unmatched`; a method no route takes too', async () => {
    const before = await scrapeMetrics(`${s.url}/metrics`, TOKEN);
    for (const path of ['/no/such/a', '/no/such/b', '/wp-admin.php']) expect((await s.api.get(path)).status).toBe(404);
    expect((await s.api.delete('/api/v1/auth/methods')).status).toBe(405);
    const after = await scrapeMetrics(`${s.url}/metrics`, TOKEN);
    const grew = (labels: Record<string, string>) => after.count(HTTP, labels) - before.count(HTTP, labels);
    expect(grew({ route: 'unmatched', method: 'GET', status_class: '4xx' })).toBe(3);
    expect(grew({ route: 'unmatched', method: 'DELETE', status_class: '4xx' })).toBe(1);
    const routes = new Set(after.labelSets(HTTP).map((l) => l.route));
    for (const r of routes) expect(r === 'unmatched' || r?.startsWith('/'), r).toBe(true);
    expect([...routes].some((r) => r?.includes('no/such') || r?.includes('wp-admin'))).toBe(false);
  });

  it('the metrics port serves the same registry with the token: process metrics and the app label', async () => {
    const m = await scrapeMetrics(s.metricsUrl as string, TOKEN);
    expect(m.has('process_cpu_user_seconds_total', 'counter')).toBe(true);
    expect(m.has('nodejs_eventloop_lag_seconds', 'gauge')).toBe(true);
    expect(m.has(HTTP, 'histogram')).toBe(true);
    expect(m.labelSets('process_cpu_user_seconds_total')[0]).toMatchObject({ app: 'svc' });
  });
});

describe('the admin API without a scrape token', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startAdminApi({ env: { SVC_METRICS_PORT: '0' } });
  });
  afterAll(() => s.stop());

  it('the public port has no /metrics (404 like any unknown path); the metrics port answers without a token', async () => {
    const res = await s.api.get('/metrics');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ type: 'urn:svc:problem:route-not-found' });
    const m = await scrapeMetrics(s.metricsUrl as string);
    expect(m.has(HTTP, 'histogram')).toBe(true);
  });

  it('the metrics port serves /metrics only, GET or HEAD', async () => {
    const other = await fetch(new URL('/api/v1/nodes', s.metricsUrl as string));
    expect(other.status).toBe(404);
    expect(other.headers.get('content-type')).toBe('application/problem+json');
    const post = await fetch(s.metricsUrl as string, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(s.metricsUrl as string, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });
});
