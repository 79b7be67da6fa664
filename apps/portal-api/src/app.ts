import type { OpenAPIHono } from '@hono/zod-openapi';
import { type AppEnv, createRouter } from '@svc/http';
import { registerSubscriptionLink } from './sub/get-subscription.ts';

/**
 * The customer-facing surface as a router to mount on a root app (alone or all-in-one):
 * GET /sub/{token} (unversioned, spec 4.5). /portal/v1 joins it with the portal issue.
 */
export function createPortalApi(): OpenAPIHono<AppEnv> {
  const app = createRouter('/');
  registerSubscriptionLink(app);
  return app;
}
