import type { OpenAPIHono } from '@hono/zod-openapi';
import { type AppEnv, READERS, registerOAuthRoutes } from '@svc/http';

/**
 * Admin OAuth (spec 4.3, 5.6): GET /auth/oauth/{provider}/redirect and /callback, POST
 * /auth/oauth/{provider}/link (any role), GET /auth/identities, DELETE /auth/identities/{provider}.
 * Providers: auth.oauth.<name>. Redirect URI: {public base}/api/v1/auth/oauth/{provider}/callback.
 */
export const register = (app: OpenAPIHono<AppEnv>) =>
  registerOAuthRoutes(app, { surface: 'admin', auth: { scope: 'admin', roles: READERS }, tag: 'auth', webAppPath: '/admin/' });
