import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Context, Hono } from 'hono';
import { acceptsGzip } from './accept-encoding.ts';
import type { AppEnv } from './env.ts';
import { problemResponse } from './problem.ts';

/**
 * A single-page web app built by Vite (apps/admin-web), served from its dist/ directory at
 * `mountAt` on the same origin as the API it calls:
 * - `assets/*` (names carry a content hash): cached for a year, immutable;
 * - every other path under the mount answers index.html (the app's router takes the path),
 *   `no-cache`, with `<base href>` set at run time from the public base URL's path, so the same
 *   build works behind a reverse proxy's secret prefix (`SVC_PUBLIC_BASE_URL=https://host/s3cr3t`);
 * - a Content-Security-Policy that allows only this origin: no inline script, no third party.
 *   Inline styles are allowed: Mantine sets CSS variables and positions through style attributes.
 * Files are read once and kept in memory with their gzip (a few hundred KiB in all).
 */
export interface WebAppOptions {
  /** '/admin' */
  mountAt: string;
  /** dist/ of the built app; null or missing: every path answers 503 and says how to build it. */
  dir: string | null;
  /** Path of the public base URL ('' or '/prefix'), put before mountAt in <base href>. */
  publicPrefix: string;
  /**
   * Paths under the mount that are not the app's ('/portal/v1': the API beside the portal):
   * left to the routes registered for them, and to the not-found answer when none matches,
   * never answered with the app's page.
   */
  reserved?: string[];
}

export const WEB_APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  html: 'text/html; charset=utf-8',
  json: 'application/json',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
  woff2: 'font/woff2',
  webmanifest: 'application/manifest+json',
  txt: 'text/plain; charset=utf-8',
};

/** A file name the build writes: letters, digits, '.', '_', '-' (no '..', no separators). */
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

interface Loaded {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
}

export function registerWebApp(root: Hono<AppEnv>, options: WebAppOptions): void {
  const { mountAt, dir } = options;
  const base = `${options.publicPrefix}${mountAt}/`;
  const files = new Map<string, Loaded | null>();
  let index: Loaded | null | undefined;

  const load = (relative: string): Loaded | null => {
    if (files.has(relative)) return files.get(relative) ?? null;
    let loaded: Loaded | null = null;
    const path = dir ? join(dir, relative) : null;
    if (path && existsSync(path) && statSync(path).isFile()) {
      const body = readFileSync(path);
      const ext = relative.slice(relative.lastIndexOf('.') + 1).toLowerCase();
      const type = TYPES[ext] ?? 'application/octet-stream';
      const compressible = /^(text\/|application\/(json|manifest)|image\/svg)/.test(type) && body.length > 512;
      loaded = { body, gzip: compressible ? gzipSync(body, { level: 9 }) : null, type };
    }
    files.set(relative, loaded);
    return loaded;
  };

  const loadIndex = (): Loaded | null => {
    if (index !== undefined) return index;
    const raw = dir && existsSync(join(dir, 'index.html')) ? readFileSync(join(dir, 'index.html'), 'utf8') : null;
    if (raw === null) return null; // not cached: a build finishing later is picked up
    const html = Buffer.from(raw.replace(/<base href="[^"]*"\s*\/?>/, `<base href="${escapeAttr(base)}">`));
    index = { body: html, gzip: gzipSync(html, { level: 9 }), type: TYPES.html as string };
    return index;
  };

  const send = (c: Context<AppEnv>, file: Loaded, cache: string) => {
    const gzip = file.gzip !== null && acceptsGzip(c.req.header('accept-encoding'));
    const headers: Record<string, string> = {
      'content-type': file.type,
      'cache-control': cache,
      'content-security-policy': WEB_APP_CSP,
      'referrer-policy': 'same-origin',
      'x-frame-options': 'DENY',
      vary: 'accept-encoding',
    };
    if (gzip) headers['content-encoding'] = 'gzip';
    const body = gzip ? (file.gzip as Buffer) : file.body;
    // The server sets Content-Length from the body (a second one here would be a duplicate header).
    if (c.req.method === 'HEAD') return c.body(null, 200, { ...headers, 'content-length': String(body.length) });
    return c.body(new Uint8Array(body), 200, headers);
  };

  const notBuilt = (c: Context<AppEnv>) =>
    problemResponse(c, 'unavailable', `the web app at ${mountAt}/ is not built: run \`pnpm build\` (or set its SVC_*_WEB_DIR)`);
  const reserved = (path: string) => (options.reserved ?? []).some((r) => path === r || path.startsWith(`${r}/`));

  const page = (c: Context<AppEnv>) => {
    const html = loadIndex();
    return html ? send(c, html, 'no-cache') : notBuilt(c);
  };

  root.on(['GET', 'HEAD'], mountAt, (c) => c.redirect(`${options.publicPrefix}${mountAt}/`, 301));
  root.on(['GET', 'HEAD'], `${mountAt}/assets/:name`, (c) => {
    const name = c.req.param('name');
    const file = SAFE_NAME.test(name) ? load(`assets/${name}`) : null;
    if (!file) return problemResponse(c, 'not-found', `no asset ${name}`);
    return send(c, file, 'public, max-age=31536000, immutable');
  });
  root.on(['GET', 'HEAD'], `${mountAt}/*`, async (c, next) => {
    if (reserved(c.req.path)) return next();
    const rest = c.req.path.slice(mountAt.length + 1);
    // Files at the top of dist/ (icons, manifest) by name; everything else is a route of the app.
    if (rest !== 'index.html' && SAFE_NAME.test(rest) && rest.includes('.')) {
      const file = load(rest);
      if (file) return send(c, file, 'public, max-age=3600');
    }
    return page(c);
  });
}

/**
 * A web app's dist/ directory: the configured one, else the workspace's `apps/<name>/dist` with
 * an index.html, found from `from` (a module's import.meta.url) upwards: apps/ is an ancestor of
 * an app's bundle (apps/<app>/dist/main.js), the workspace root one of every source file.
 */
export function webAppDir(configured: string | undefined, name: string, from: string): string | null {
  if (configured) return configured;
  let dir = dirname(fileURLToPath(from));
  for (let i = 0; i < 8; i++) {
    for (const candidate of [join(dir, name, 'dist'), join(dir, 'apps', name, 'dist')])
      if (existsSync(join(candidate, 'index.html'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return null;
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/** The path of a public base URL ('' when none or '/'): what a reverse proxy puts before our paths. */
export function publicPrefixOf(publicBaseUrl: string | undefined): string {
  if (!publicBaseUrl) return '';
  const path = new URL(publicBaseUrl).pathname.replace(/\/+$/, '');
  return path === '/' ? '' : path;
}
