import type { OpenAPIHono } from '@hono/zod-openapi';
import { type AppEnv, createRouter } from '@svc/http';
import { registerSubscriptionLink } from './sub/get-subscription.ts';
import { createSubLinkCaches, type SubLinkCaches } from './sub/sub-link-caches.ts';

export interface PortalApi {
  /** The routes, to mount on a root app (alone or all-in-one). */
  routes: OpenAPIHono<AppEnv>;
  /** Ends the caches' bus subscriptions: after the HTTP server stopped, before the runtime closes. */
  stop(): Promise<void>;
}

/**
 * The customer-facing surface: GET /sub/{token} (unversioned, spec 4.5). /portal/v1 joins it
 * with the portal issue. Owns the caches its answers read through.
 */
export function createPortalApi(): PortalApi {
  const routes = createRouter('/');
  let caches: SubLinkCaches | undefined;
  // Made at the first request from the deps the root app hands every request, so mounting
  // needs none (the test server mounts routes before its runtime is handed out).
  registerSubscriptionLink(routes, (deps) => {
    caches ??= createSubLinkCaches(deps);
    return caches;
  });
  return {
    routes,
    stop: async () => {
      await caches?.stop();
    },
  };
}
