import { HTML_PAGE_CSP } from '@svc/sub-formats';
import type { TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalTestServer, startPortal } from './harness.ts';

// Issue 28 item 10: a browser that opened an unknown or old /sub link got raw JSON. A browser
// (Accept lists text/html) gets a page in the link page's style saying the link is not valid or
// no longer valid and to ask the provider for the new one, with the status it had (404) and the
// page's CSP; apps keep the problem document. The fast path and the cache (on and off) are in
// sub-link-fast-path.test.ts: the same bytes from both.

const BASE = 'https://vpn.example.com';
const CHROME = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
};
let s: TestServer;
let portal: PortalTestServer;
let link: string;
let rotatedAway: string;

beforeAll(async () => {
  portal = await startPortal({ SVC_PUBLIC_BASE_URL: BASE, SVC_SUB_CACHE_SECONDS: '0' });
  s = portal.s;
  const client = await portal.post('/api/v1/clients', { email: 'error-page@example.com' });
  const sub = await portal.post('/api/v1/subscriptions', { client_id: client.id, access_group_ids: [] });
  rotatedAway = sub.link;
  const rotated = await s.api.post(`/api/v1/subscriptions/${sub.id}/rotate-credentials`, undefined, { token: portal.token });
  expect(rotated.status).toBe(200);
  link = rotated.body.link;
});
afterAll(() => portal.stop());

const get = (path: string, headers: Record<string, string>) => fetch(`${s.url}${path}`, { headers });
const pathOf = (url: string) => new URL(url).pathname;

describe('GET /sub/{token} that names nothing, asked by a browser', () => {
  it('/sub/unknown with Accept: text/html is an HTML page: 404, the page’s CSP, "not valid, or no longer valid", ask the provider', async () => {
    const res = await get('/sub/unknown', { accept: 'text/html' });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(HTML_PAGE_CSP);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const page = await res.text();
    expect(page.toLowerCase().startsWith('<!doctype html>')).toBe(true);
    expect(page).toContain('This link is not valid');
    expect(page).toContain('not valid, or no longer valid. Ask your provider for the new link');
    expect(page).not.toMatch(/<script/i);
  });

  it('an unknown, a malformed and a rotated-away token get the same page, which names none of them', async () => {
    const pages = new Set<string>();
    for (const path of ['/sub/unknown', `/sub/${'A'.repeat(43)}`, pathOf(rotatedAway), `${pathOf(rotatedAway)}?flag=1`]) {
      const res = await get(path, CHROME);
      expect(res.status, path).toBe(404);
      const page = await res.text();
      expect(page).not.toContain(path.slice(5, 20));
      pages.add(page);
    }
    expect(pages.size).toBe(1);
    // The link that replaced it still serves its own page.
    const live = await get(pathOf(link), CHROME);
    expect(live.status).toBe(200);
    expect(await live.text()).not.toContain('This link is not valid');
  });

  it('offers the operator’s support link when one is set', async () => {
    const set = await s.api.patch(
      '/api/v1/settings/subscription-link',
      { support_url: 'https://t.me/vpn_support' },
      { token: portal.token },
    );
    expect(set.status, set.text).toBe(200);
    try {
      await new Promise((r) => setTimeout(r, 50)); // settings.changed reaches the cache on a later turn
      const page = await (await get('/sub/unknown', CHROME)).text();
      expect(page).toContain('href="https://t.me/vpn_support"');
    } finally {
      expect((await s.api.patch('/api/v1/settings/subscription-link', { support_url: null }, { token: portal.token })).status).toBe(200);
    }
  });
});

describe('GET /sub/{token} that names nothing, asked by an app: the problem document as before', () => {
  it('no text/html in Accept, or a User-Agent the rules name (even with a browser’s Accept): 404 application/problem+json', async () => {
    const cases: Record<string, string>[] = [
      {},
      { accept: '*/*' },
      { accept: 'application/json' },
      { 'user-agent': 'curl/8.5.0' },
      { 'user-agent': 'v2rayNG/1.9.30', accept: CHROME.accept },
      { 'user-agent': 'clash-verge/v2.2.3', accept: 'text/html' },
    ];
    for (const headers of cases) {
      const res = await get(`/sub/${'A'.repeat(43)}`, headers);
      expect(res.status, JSON.stringify(headers)).toBe(404);
      expect(res.headers.get('content-type'), JSON.stringify(headers)).toMatch(/^application\/problem\+json/);
      expect(((await res.json()) as { type: string }).type).toBe('urn:svc:problem:not-found');
    }
  });
});

describe('a failure of ours, asked by a browser', () => {
  it('is the "temporarily unavailable" page with the failure’s status, never "not valid"; an app gets the problem', async () => {
    // The database goes away under the running server (last test of the file).
    await s.deps.db.destroy();
    const page = await get(pathOf(link), CHROME);
    expect(page.status).toBeGreaterThanOrEqual(500);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(HTML_PAGE_CSP);
    const text = await page.text();
    expect(text).toContain('Temporarily unavailable');
    expect(text).not.toContain('not valid');
    const app = await get(pathOf(link), { 'user-agent': 'v2rayNG/1.9.30' });
    expect(app.status).toBe(page.status);
    expect(app.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});
