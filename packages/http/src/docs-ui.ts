import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import swaggerUiDir from 'swagger-ui-dist/absolute-path.js';
import type { AppEnv } from './env.ts';

/**
 * Swagger UI from the pinned `swagger-ui-dist` package (pnpm catalog), served by us: the docs
 * page loads nothing from a third-party origin, and its Content-Security-Policy allows scripts,
 * styles and requests from our own origin only (the initializer is a file, not inline script).
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

// Imported, not looked up at run time: a bundle (infra/bundle-app.mjs) keeps swagger-ui-dist
// external and sees this import, so every app that serves the docs must depend on it (the build
// says so), and it resolves from the app's own node_modules as in the images.
const distDir = (): string => swaggerUiDir();
const cache = new Map<string, Promise<Buffer>>();
const asset = (file: string): Promise<Buffer> => {
  let body = cache.get(file);
  if (!body) {
    body = readFile(join(distDir(), file));
    cache.set(file, body);
  }
  return body;
};

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/**
 * Registers GET `docsPath` (the page), `docsPath/init.js` and `docsPath/assets/<file>` on a
 * router. `mountedAt` is the router's base path, so the page can name its assets absolutely.
 */
export function registerDocsUi(
  app: OpenAPIHono<AppEnv>,
  opts: { mountedAt: string; docsPath: string; specUrl: string; title: string },
): void {
  const base = `${opts.mountedAt}${opts.docsPath}`;
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(opts.title)}</title>
<link rel="stylesheet" href="${base}/assets/swagger-ui.css">
<link rel="stylesheet" href="${base}/assets/index.css">
<link rel="icon" type="image/png" href="${base}/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${base}/assets/swagger-ui-bundle.js"></script>
<script src="${base}/init.js"></script>
</body>
</html>
`;
  const init = `window.ui = SwaggerUIBundle(${JSON.stringify({ url: opts.specUrl, dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null })});\n`;
  const pageHeaders = {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': DOCS_CSP,
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-cache',
  };
  app.get(opts.docsPath, (c) => c.body(page, 200, pageHeaders));
  app.get(`${opts.docsPath}/init.js`, (c) =>
    c.body(init, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }),
  );
  app.get(`${opts.docsPath}/assets/:file`, async (c) => {
    const file = c.req.param('file');
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) return c.notFound();
    return c.body(new Uint8Array(await asset(file)), 200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
  });
}
