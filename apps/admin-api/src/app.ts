import type { OpenAPIHono } from '@hono/zod-openapi';
import { type AppEnv, createRouter, registerDocsUi, registerOpenApiDocument } from '@svc/http';
import { registerRoutes } from './routes/index.ts';

export const ADMIN_BASE = '/api/v1';

/** The admin REST surface, /api/v1, as a router to mount on a root app (alone or all-in-one). */
export function createAdminApi(): OpenAPIHono<AppEnv> {
  const app = createRouter(ADMIN_BASE);
  registerRoutes(app);
  registerOpenApiDocument(app, {
    base: ADMIN_BASE,
    refreshCookie: 'svc_admin_refresh',
    info: {
      title: 'svc admin API',
      version: '1',
      description: 'Admin surface of the node control plane. Errors are application/problem+json (RFC 9457).',
    },
  });
  registerDocsUi(app, { mountedAt: ADMIN_BASE, docsPath: '/docs', specUrl: `${ADMIN_BASE}/openapi.json`, title: 'svc admin API' });
  return app;
}
