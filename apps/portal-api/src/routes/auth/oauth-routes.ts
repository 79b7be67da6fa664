import type { OpenAPIHono } from '@hono/zod-openapi';
import { type AppEnv, registerOAuthRoutes } from '@svc/http';

/**
 * Portal OAuth (spec 4.6, 5.6), on the router mounted at /portal/v1: GET
 * /auth/oauth/{provider}/redirect and /callback (sign-in or registration by
 * portal_auth.registration), POST /auth/oauth/{provider}/link, GET /auth/identities, DELETE
 * /auth/identities/{provider}. Providers: portal_auth.oauth.<name>; their own redirect URIs:
 * {public base}/portal/v1/auth/oauth/{provider}/callback.
 */
export const registerPortalOAuthRoutes = (app: OpenAPIHono<AppEnv>): void =>
  registerOAuthRoutes(app, { surface: 'client', auth: { scope: 'client' }, tag: 'portal-auth', webAppPath: '/portal/' });
