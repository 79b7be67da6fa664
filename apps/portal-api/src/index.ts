export { createPortalApi, type PortalApi } from './app.ts';
export { registerPortalOAuthRoutes } from './routes/auth/oauth-routes.ts';
export { PORTAL_WEB_PATH, registerPortalWeb } from './web.ts';
