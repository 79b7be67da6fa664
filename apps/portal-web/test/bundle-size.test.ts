import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

/**
 * The portal's first load (issue 32.7): the JavaScript index.html makes the browser fetch before
 * anything shows (its module script and every modulepreload) is at most 150 KiB gzipped, on a
 * phone's connection; screens, QR codes and other languages are chunks fetched when used. The
 * page has no inline script (the CSP allows none). `pnpm test` builds the app first (turbo).
 */
const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
const BUDGET = 150 * 1024;

describe.skipIf(!existsSync(join(DIST, 'index.html')))('the built customer portal', () => {
  const html = existsSync(join(DIST, 'index.html')) ? readFileSync(join(DIST, 'index.html'), 'utf8') : '';

  it('loads at most 150 KiB of gzipped JavaScript before the first screen', () => {
    const initial = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="\.\/(assets\/[^"]+\.js)"/g)].map(
      (m) => m[1] as string,
    );
    expect(initial.length).toBeGreaterThan(0);
    const sizes = initial.map((f) => ({ f, gz: gzipSync(readFileSync(join(DIST, f)), { level: 9 }).length }));
    const total = sizes.reduce((n, s) => n + s.gz, 0);
    expect(total, `initial JavaScript ${(total / 1024).toFixed(1)} KiB gzipped: ${JSON.stringify(sizes)}`).toBeLessThanOrEqual(BUDGET);
  });

  it('has no inline script: every <script> names its file', () => {
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\ssrc="/);
      expect((body as string).trim()).toBe('');
    }
  });

  it('asks the server for its base path: <base href> is the one line the server rewrites', () => {
    expect(html).toContain('<base href="/portal/" />');
    expect(html).not.toMatch(/(?:src|href)="\/(?!portal\/")/);
  });
});
