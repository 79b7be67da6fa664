import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@svc/config';
import { startTestServer, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalApi } from '../src/app.ts';
import { registerPortalWeb } from '../src/web.ts';

/**
 * The customer portal served at /portal/ (issue 32 item 1) by the same rules as the admin panel
 * (hashed assets immutable, the page no-cache with <base href> from the public base URL, the
 * same CSP), beside its API at /portal/v1, which stays the API's: an unknown /portal/v1 path is
 * the API's 404 problem, never the app's page.
 */
function builtApp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-portal-web-dist-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><html><head><base href="/portal/" /><script type="module" src="./assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>',
  );
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);
  return dir;
}

describe('the customer portal at /portal/', () => {
  let s: TestServer;
  const portal = createPortalApi();
  const dir = builtApp();
  beforeAll(async () => {
    const env = { SVC_PORTAL_WEB_DIR: dir, SVC_PUBLIC_BASE_URL: 'https://shop.example.com/p' };
    s = await startTestServer({
      env,
      mount: (root) => {
        root.route('/', portal.routes);
        registerPortalWeb(root as never, loadConfig(env));
        return portal;
      },
    });
  });
  afterAll(async () => {
    await s.stop();
    await portal.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers its routes with the page, based under the public prefix, no-cache, with the panel’s CSP', async () => {
    for (const path of ['/portal/', '/portal/subscriptions/sub_1', '/portal/sign-in']) {
      const res = await fetch(`${s.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await res.text()).toContain('<base href="/p/portal/">');
    }
    const asset = await fetch(`${s.url}/portal/assets/index-abc123.js`);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('leaves /portal/v1 to the API: its routes answer, an unknown one is its 404 problem, not the page', async () => {
    const methods = await fetch(`${s.url}/portal/v1/auth/methods`);
    expect(methods.status).toBe(200);
    expect(methods.headers.get('content-type')).toContain('application/json');
    for (const path of ['/portal/v1/nothing-here', '/portal/v1']) {
      const res = await fetch(`${s.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toContain('application/problem+json');
    }
  });
});
