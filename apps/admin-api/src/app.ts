import type { OpenAPIHono } from '@hono/zod-openapi';
import { type AppEnv, createRouter, registerDocsUi, registerOpenApiDocument } from '@svc/http';
import { createAdminState } from './admin-state.ts';
import { registerEventWebhooks } from './event-webhooks.ts';
import { registerRoutes } from './routes/index.ts';

export const ADMIN_BASE = '/api/v1';

export interface AdminApi {
  /** The routes, to mount on a root app (alone or all-in-one). */
  routes: OpenAPIHono<AppEnv>;
  /** Ends what the surface holds (its live log tails): after the HTTP server stopped, before the runtime closes. */
  stop(): Promise<void>;
}

/** The admin REST surface, /api/v1, and the state it owns. */
export function createAdminApi(): AdminApi {
  const state = createAdminState();
  const app = createRouter(ADMIN_BASE);
  registerRoutes(app, state);
  registerEventWebhooks(app);
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
  return { routes: app, stop: () => state.stop() };
}

/** createAdminApi mounted on `root`; the caller stops it (test servers, benchmarks). */
export function mountAdminApi(root: OpenAPIHono<AppEnv>): AdminApi {
  const api = createAdminApi();
  root.route('/', api.routes);
  return api;
}
