import type { OpenAPIHono } from '@hono/zod-openapi';
import { type AppEnv, createRouter, registerDocsUi, registerOpenApiDocument } from '@svc/http';
import { registerCheckoutReturnPage } from './pages/checkout-return-page.ts';
import { registerMagicLinkPage } from './pages/magic-link-page.ts';
import { registerPortalRoutes } from './routes/index.ts';
import { registerSubscriptionLink } from './sub/get-subscription.ts';
import { createSubLinkCaches, type SubLinkCaches } from './sub/sub-link-caches.ts';

export interface PortalApi {
  /** The routes, to mount on a root app (alone or all-in-one). */
  routes: OpenAPIHono<AppEnv>;
  /** Ends the caches' bus subscriptions: after the HTTP server stopped, before the runtime closes. */
  stop(): Promise<void>;
}

export const PORTAL_BASE = '/portal/v1';

/**
 * The customer-facing surfaces: the portal REST API /portal/v1 (spec 4.6; its own OpenAPI 3.1
 * document and docs page) and GET /sub/{token} (unversioned, spec 4.5). Owns the caches the
 * link answers read through.
 */
export function createPortalApi(): PortalApi {
  const routes = createRouter('/');
  let caches: SubLinkCaches | undefined;
  // Made at the first request from the deps the root app hands every request, so mounting
  // needs none (the test server mounts routes before its runtime is handed out).
  const links = registerSubscriptionLink(routes, (deps) => {
    caches ??= createSubLinkCaches(deps);
    return caches;
  });
  routes.route('/', portalRouter());
  // Last: old links at the root of the host (Remnawave's /{shortUuid}) never shadow a route.
  links.registerRootLinks(routes);
  return {
    routes,
    stop: async () => {
      await caches?.stop();
    },
  };
}

/** /portal/v1: client-scope routes only (an admin token is refused before any business logic). */
function portalRouter(): OpenAPIHono<AppEnv> {
  const app = createRouter(PORTAL_BASE);
  registerPortalRoutes(app);
  registerMagicLinkPage(app, PORTAL_BASE);
  registerCheckoutReturnPage(app);
  registerOpenApiDocument(app, {
    base: PORTAL_BASE,
    refreshCookie: 'svc_portal_refresh',
    info: {
      title: 'svc portal API',
      version: '1',
      description:
        'Customer surface of the node control plane: sign-in (magic link, password, OAuth), registration, the customer’s subscriptions, plans and payment methods. Errors are application/problem+json (RFC 9457).',
    },
  });
  registerDocsUi(app, { mountedAt: PORTAL_BASE, docsPath: '/docs', specUrl: `${PORTAL_BASE}/openapi.json`, title: 'svc portal API' });
  return app;
}
