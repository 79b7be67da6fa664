import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@svc/config';
import { startTestServer, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountAdminApi } from '../src/app.ts';
import { registerAdminWeb } from '../src/web.ts';

/**
 * The admin panel served at /admin/ (issue 30.2) from a built directory: hashed assets cached
 * immutably, every other path the app's page (no-cache) with <base href> from the public base
 * URL at run time, a CSP without inline script or third-party origins, nothing outside the
 * directory reachable.
 */

function builtApp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-admin-web-dist-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><html><head><base href="/admin/" /><script type="module" src="./assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>',
  );
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(tmpdir(), 'svc-outside.txt'), 'outside');
  return dir;
}

/** The API and the panel on one root, the panel configured by `env` as an operator would. */
const start = (env: Record<string, string>) =>
  startTestServer({
    env,
    mount: (root) => {
      registerAdminWeb(root as never, loadConfig(env));
      return mountAdminApi(root);
    },
  });

describe('the admin panel at /admin/', () => {
  let s: TestServer;
  const dir = builtApp();
  beforeAll(async () => {
    s = await start({ SVC_ADMIN_WEB_DIR: dir });
  });
  afterAll(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the page with its base at /admin/, no-cache, and a CSP with no inline script or third-party origin', async () => {
    const res = await fetch(`${s.url}/admin/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy') as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-eval|https?:|script-src[^;]*unsafe-inline/);
    expect(await res.text()).toContain('<base href="/admin/">');
  });

  it("answers the app's page for any of its routes (a reload of /admin/nodes/x)", async () => {
    const res = await fetch(`${s.url}/admin/nodes/nod_123?connectivity=online`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<div id="root">');
    const bare = await fetch(`${s.url}/admin`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/admin/');
  });

  it('serves hashed assets immutable for a year, gzipped when asked, and HEAD without a body', async () => {
    const res = await fetch(`${s.url}/admin/assets/index-abc123.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(await res.text()).toContain('console.log');
    const head = await fetch(`${s.url}/admin/assets/index-abc123.js`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('reaches nothing outside its directory: unknown assets and traversals are 404 problems', async () => {
    for (const path of [
      '/admin/assets/nope.js',
      '/admin/assets/..%2f..%2fsvc-outside.txt',
      '/admin/assets/%2e%2e%2fsvc-outside.txt',
      '/admin/assets/.hidden',
    ]) {
      const res = await fetch(`${s.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    // A traversal outside assets/ is an app route: the page, never the file.
    const page = await fetch(`${s.url}/admin/..%2f..%2fsvc-outside.txt`);
    expect(await page.text()).not.toContain('outside');
  });

  it('serves files at the top of the build by name (the icon)', async () => {
    const res = await fetch(`${s.url}/admin/favicon.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
  });
});

describe("behind a reverse proxy's secret prefix", () => {
  let s: TestServer;
  const dir = builtApp();
  beforeAll(async () => {
    s = await start({ SVC_ADMIN_WEB_DIR: dir, SVC_PUBLIC_BASE_URL: 'https://panel.example.com/s3cr3t' });
  });
  afterAll(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the prefix into <base href> at run time: the same build works under any path', async () => {
    const html = await (await fetch(`${s.url}/admin/subscriptions`)).text();
    expect(html).toContain('<base href="/s3cr3t/admin/">');
    const bare = await fetch(`${s.url}/admin`, { redirect: 'manual' });
    expect(bare.headers.get('location')).toBe('/s3cr3t/admin/');
  });
});

describe('without a build', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await start({ SVC_ADMIN_WEB_DIR: join(tmpdir(), 'svc-no-such-build') });
  });
  afterAll(() => s.stop());

  it('says how to build it (503 problem), and the API still answers', async () => {
    const res = await fetch(`${s.url}/admin/`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { detail: string }).detail).toContain('pnpm build');
    expect((await fetch(`${s.url}/api/v1/auth/methods`)).status).toBe(200);
  });
});
